/**
 * The typed client SDK (`@bernstein-a2a/client`, also `bernstein-a2a/client`): the openapi-fetch client generated
 * from openapi.yaml, and helpers built on it for peers: send a task and wait for its end, verify a peer's capability
 * card before delegating, verify a task receipt; sign requests and verify the node's signed answers (`signWith`,
 * `pinnedFingerprint`). HTTP outcomes and verdicts are data (`{ data } | { error }` from the client,
 * `{ ok: true, value } | { ok: false, code, detail }` from the helpers); only network failures throw, an answer past
 * the client's size or time limit ({@link AnswerRefused}), and an answer the pinned node did not sign
 * ({@link AnswerUnverified}), each with a stable `code`.
 *
 * @module
 */
export type { paths, components, operations } from '../../generated/openapi.js'
export type { A2AReceipt, A2ATask, A2ATaskStatus, ClientPaths } from './a2a-types.js'
export { createApiClient } from './api-client.js'
export type { ApiClient, ApiClientOptions } from './api-client.js'
export { AnswerRefused, DEFAULT_ANSWER_TIMEOUT_MS, DEFAULT_MAX_ANSWER_BYTES } from './bounded-fetch.js'
export type { AnswerRefusedCode } from './bounded-fetch.js'
export { AnswerUnverified } from './signed-requests.js'
export type { AnswerUnverifiedCode, RequestSigner } from './signed-requests.js'
export { keyFingerprint } from '../crypto/fingerprint.js'
export { sendAndWait, isTerminalA2AStatus, TERMINAL_A2A_STATUSES } from './send-and-wait.js'
export type {
  A2ATaskSend,
  SendAndWaitDone,
  SendAndWaitFailed,
  SendAndWaitFailure,
  SendAndWaitFailureData,
  SendAndWaitOptions,
  SendAndWaitResult,
  TerminalA2AStatus,
} from './send-and-wait.js'
export { fetchAndVerifyPeerCard } from './peer-card.js'
export type { AcceptedPeerCard, FetchPeerCardOptions, PeerCardFailure, PeerCardResult, PolicyRequirements, SignedCapabilityCard } from './peer-card.js'
export { verifyTaskReceipt } from './verify-receipt.js'
export type { A2AReceiptResult, ReceiptSource, ReceiptTrust } from './verify-receipt.js'
