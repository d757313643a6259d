// Moved to packages/openapi-validation (@svc/openapi-validation), shared with the server.
export * from '@svc/openapi-validation';
