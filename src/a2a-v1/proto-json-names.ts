/**
 * ProtoJSON parsers accept a field under its JSON name (`historyLength`) and under its proto name
 * (`history_length`); A2A's JSON is ProtoJSON, and clients send either (the conformance kit sends `history_length`).
 * This gives the proto names of a request's own fields, and of its `configuration` and `message`, their JSON names,
 * unless the JSON name is present too (it wins). Free-form values (`metadata`, a part's `data`) are left as they are.
 *
 * @module
 */
import { A2AProtocolError } from './a2a-v1-errors.js'

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

const camel = (name: string): string => name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase())

/**
 * What a field that arrived under its proto name must be: the contract checked the request before its names were
 * turned, so these are checked here (an integer's bounds as the contract writes them).
 */
const CHECKS: Readonly<Record<string, (value: unknown) => boolean>> = {
  historyLength: (v) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 1000,
  pageSize: (v) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 100,
  returnImmediately: (v) => typeof v === 'boolean',
  includeArtifacts: (v) => typeof v === 'boolean',
  contextId: (v) => typeof v === 'string' && v.length <= 200,
  taskId: (v) => typeof v === 'string' && v.length <= 200,
  messageId: (v) => typeof v === 'string' && v.length >= 1 && v.length <= 200,
  pageToken: (v) => typeof v === 'string' && v.length <= 1000,
  statusTimestampAfter: (v) => typeof v === 'string',
  acceptedOutputModes: (v) => Array.isArray(v) && v.every((m) => typeof m === 'string'),
  referenceTaskIds: (v) => Array.isArray(v) && v.every((m) => typeof m === 'string'),
}

function renamed(object: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(object)) {
    const json = camel(key)
    if (json === key) out[key] = value
    else if (!Object.hasOwn(object, json)) {
      const check = CHECKS[json]
      if (check !== undefined && !check(value)) throw new A2AProtocolError('InvalidParams', `${key} is not a valid ${json}`, { field: key.slice(0, 100) })
      out[json] = value
    }
  }
  return out
}

/** The request with its proto field names (top level, `configuration`, `message`) turned into JSON names. */
export function withJsonNames(params: Record<string, unknown>): Record<string, unknown> {
  const out = renamed(params)
  for (const nested of ['configuration', 'message']) {
    const value = out[nested]
    if (isObject(value)) out[nested] = renamed(value)
  }
  return out
}
