/**
 * Offline verification of a task receipt for `bernstein-a2a/client`. The check itself lives in src/receipts, with
 * the receipt format and the server's signer, so client, CLI and server verify the same way.
 *
 * @module
 */
export { type A2AReceiptResult, type ReceiptTrust, verifyTaskReceipt } from '../receipts/verify-a2a-receipt.js'
