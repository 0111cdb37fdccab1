/** The HTTP+JSON binding's media type (A2A 1.0.1); the JSON-RPC binding keeps `application/json`. */
export const A2A_JSON = 'application/a2a+json'

/**
 * The media type of an HTTP+JSON answer: `application/a2a+json`, unless the client's `Accept` names
 * `application/json` and not `application/a2a+json` (a 1.0.0 client), which then gets `application/json`.
 */
export function responseContentType(accept: string | undefined): string {
  if (accept === undefined) return A2A_JSON
  const types = accept.split(',').map((part) => part.split(';')[0]?.trim().toLowerCase() ?? '')
  return types.includes('application/json') && !types.includes(A2A_JSON) ? 'application/json' : A2A_JSON
}
