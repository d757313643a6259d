"""Python SDK of the svc HTTP APIs.

One generated client package per interface group, ``svc_sdk.generated.<group>`` (group names
with ``_`` for ``-``, e.g. ``svc_sdk.generated.delivery_metrics``), each with its API classes
and models; ``connect`` makes the group's ``ApiClient`` for a region or base URL with the
project's credentials in every place the API takes them::

    import svc_sdk
    from svc_sdk.generated import reporting

    client = svc_sdk.connect("reporting", region="eu", api_key=KEY, secret_key=SECRET)
    result = reporting.ReportingApi(client).get_event_segmentation(e='{"event_type": "Play"}', start="20261101", end="20261107")

``verify_webhook`` checks an event streaming delivery's signature (svc_sdk.webhooks).
"""
import importlib
import json
import os

from svc_sdk.webhooks import WEBHOOK_TOLERANCE_SECONDS, WebhookVerificationError, sign_webhook, verify_webhook

__all__ = ["WEBHOOK_TOLERANCE_SECONDS", "WebhookVerificationError", "connect", "group_module", "groups", "regions", "sign_webhook", "verify_webhook"]

_GENERATED = os.path.join(os.path.dirname(__file__), "generated")


def _load(name):
    with open(os.path.join(_GENERATED, name), encoding="utf-8") as f:
        return json.load(f)


def groups():
    """Names of the interface groups, e.g. ``["ingestion", "feedback", ...]``."""
    return [api["name"] for api in _load("apis.json")]


def group_module(group):
    """The generated package of ``group`` (``svc_sdk.generated.<group>``)."""
    if group not in groups():
        raise ValueError("unknown interface group %r; known: %s" % (group, ", ".join(groups())))
    return importlib.import_module("svc_sdk.generated." + group.replace("-", "_"))


def regions(group):
    """The regions whose servers serve ``group``, in the order of its servers."""
    api = next(a for a in _load("apis.json") if a["name"] == group)
    return [server["region"] for server in api["servers"]]


def connect(group, region="standard", base_url=None, api_key=None, secret_key=None, deployment_key=None):
    """An ``ApiClient`` of ``group``'s generated package, configured for one deployment.

    region: ``"standard"`` or ``"eu"``: the group's server of that region (its URL is a server
        variable whose default is the reference server's address; pass ``base_url`` for any other).
    base_url: the base URL of the group's host, e.g. ``https://api.eu.example.com``; wins over region.
    api_key: the project's API key. Sent wherever an operation takes it: in the JSON body or the
        form (``api_key``; filled in when the request does not carry one), in the query
        (``ApiKeyQuery``), as the bearer token (``ApiKeyBearer``), and as the user name of HTTP
        Basic when ``secret_key`` is given.
    secret_key: the project's secret key, the password of HTTP Basic (``BasicAuth``).
    deployment_key: a deployment key, sent as ``Authorization: Api-Key <key>`` (``DeploymentKey``).
    """
    module = group_module(group)
    config = module.Configuration()
    if base_url:
        config.host = base_url.rstrip("/")
    else:
        known = regions(group)
        if region not in known:
            raise ValueError("group %s has no server in region %r; its regions: %s" % (group, region, ", ".join(known)))
        config.server_index = known.index(region)
    if api_key is not None:
        config.api_key["ApiKeyQuery"] = api_key
        # Bearer schemes (ApiKeyBearer) read access_token, which this generator's Configuration never defines.
        config.access_token = api_key
    if api_key is not None and secret_key is not None:
        config.username = api_key
        config.password = secret_key
    if deployment_key is not None:
        config.api_key["DeploymentKey"] = deployment_key
        config.api_key_prefix["DeploymentKey"] = "Api-Key"
    in_request = _load("credentials.json")[group]["inRequest"]
    if api_key is None or not in_request:
        return module.ApiClient(config)
    return _with_request_key(module.ApiClient, in_request, api_key)(config)


def _with_request_key(base, in_request, api_key):
    """A subclass of ``base`` that puts ``api_key`` into the body or form of the operations
    that carry it there (``in_request``: ``"METHOD path"`` -> ``{in, name}``)."""

    class RequestKeyApiClient(base):
        def call_api(self, resource_path, method, *args, **kwargs):
            credential = in_request.get("%s %s" % (method, resource_path))
            if credential and credential["in"] == "body":
                kwargs["body"] = _body_with_key(kwargs.get("body"), credential["name"], api_key)
            elif credential and credential["in"] == "form":
                fields = list(kwargs.get("post_params") or [])
                if all(name != credential["name"] for name, _ in fields):
                    fields.append((credential["name"], api_key))
                kwargs["post_params"] = fields
            return super().call_api(resource_path, method, *args, **kwargs)

    return RequestKeyApiClient


def _body_with_key(body, name, api_key):
    if isinstance(body, dict):
        return body if body.get(name) is not None else dict(body, **{name: api_key})
    if body is not None and hasattr(body, name) and getattr(body, name) is None:
        setattr(body, name, api_key)
    return body
