// Every listing says how it is paged (`x-svc-pagination`): an operation named list<Noun>, and
// any operation that takes a page token or an offset, so clients and SDKs can walk it.
const PAGING_PARAMETERS = ['page_token', 'offset'];

export default function paginationDeclared(operation) {
  if (operation?.['x-svc-pagination'] !== undefined) return [];
  const pagingParameter = (operation?.parameters ?? []).find((p) => p?.in === 'query' && PAGING_PARAMETERS.includes(p.name));
  if (pagingParameter) return [{ message: `The operation takes \`${pagingParameter.name}\` but does not declare x-svc-pagination.` }];
  if (/^list[A-Z]/.test(operation?.operationId ?? '')) return [{ message: `Listing ${operation.operationId} does not declare x-svc-pagination (style none when one answer holds every item).` }];
  return [];
}
