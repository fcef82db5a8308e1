export { startClientsService, type RunningClientsService } from './service';
export { loadClientsConfig, type ClientsConfig } from './config';
