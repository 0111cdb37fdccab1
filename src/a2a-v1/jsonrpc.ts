/** JSON-RPC 2.0 envelopes, as the A2A v1.0 JSON-RPC binding uses them. */

export type JsonRpcId = string | number | null

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** An id this node can echo exactly: a string, null, or an integer a double holds exactly (beyond ±2^53 it was rounded when parsed). */
function isId(value: unknown): value is JsonRpcId {
  return value === null || typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value))
}

/**
 * Whether `body` is a JSON-RPC 2.0 request envelope (whatever its params hold): an object with `jsonrpc: "2.0"`, a
 * string `method`, an optional id that is a string, an integer within ±(2^53 - 1) or null, and optional object `params`.
 */
export function isJsonRpcEnvelope(body: unknown): boolean {
  if (!isObject(body)) return false
  if (body['jsonrpc'] !== '2.0' || typeof body['method'] !== 'string') return false
  if (Object.hasOwn(body, 'id') && !isId(body['id'])) return false
  return !Object.hasOwn(body, 'params') || isObject(body['params'])
}

/** The request's id, for its response: null when the body has none or none that is valid. */
export function jsonRpcIdOf(body: unknown): JsonRpcId {
  if (!isObject(body) || !Object.hasOwn(body, 'id')) return null
  const id = body['id']
  return isId(id) ? id : null
}
