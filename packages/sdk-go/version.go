package sdk

// Version is the SDK's version, the same as @svc/client's and the Python wheel's
// (test/packaging/check.mjs holds them equal).
const Version = "0.2.0"
