/**
 * The exact bytes of the A2A task responses the typed client receives. A receipt covers the response as the node
 * sent it, and a parsed body cannot give those back (`1.0` parses to `1`; key order and escapes are gone), so the
 * client keeps the text beside the parsed data, keyed by the `Response` it returns, for
 * {@link verifyTaskReceipt}. Kept only for the operations that return an A2A task, and released with the response.
 *
 * @module
 */
import type { Middleware } from 'openapi-fetch'

const bodies = new WeakMap<Response, Promise<string | null>>()

/** The operations whose responses carry a receipt: send, and get, under both prefixes. */
const A2A_TASK_OPERATION = /^(?:\/api\/v1)?\/a2a\/tasks\/(?:send|\{a2a_task_id\})$/

/** Keeps the text of successful A2A task responses parsed as JSON (with `parseAs: 'text'` the data is the text). */
export const keepA2ATaskBodies: Middleware = {
  onResponse({ response, schemaPath, options }) {
    if (response.ok && options.parseAs === 'json' && A2A_TASK_OPERATION.test(schemaPath)) {
      bodies.set(
        response,
        response
          .clone()
          .text()
          .catch(() => null),
      )
    }
    return undefined
  },
}

/** The text kept for a response the typed client returned, or undefined when none was kept. */
export function keptBody(response: Response): Promise<string | null> | undefined {
  return bodies.get(response)
}
