// The package's entry: start a server in this process (tests, embedding) and the list of
// operations it does not serve yet.
export { startServer, defaultPort, hostRoles, type RunningServer, type ServerConfig } from './server.js';
export type { OperationId } from './http/operations.js';
export { Tenancy, type Project, type Deployment } from './shared/tenancy.js';
