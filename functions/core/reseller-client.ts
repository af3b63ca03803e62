/**
 * The reseller client's public surface, kept at its old path so existing imports work. The parts
 * live under `./reseller/`: transport (send, retry decision, concurrency, limits), paging
 * (completeness rules) and client (the API's resources).
 */
export {
  apiKeyProblem,
  type ListFilter,
  type ListPage,
  type Problem,
  parseRetryAfter,
  ResellerClient,
  type ResellerClientOptions,
  retryDecision,
  scrubSecrets,
} from './reseller/client';
