/**
 * The contract's types as the typed client hands them out. `openapi.yaml` keeps the seed's `A2ATaskResponse`
 * (`status` a string, `receipt` an open object, for byte-compatibility with Bernstein's contract) and names the
 * values beside it: `A2ATaskStatus` and `A2AReceipt`. The client narrows the task response to them everywhere it
 * appears, so `task.status` is a union the compiler checks and `task.receipt?.entry_hash` is a string.
 *
 * @module
 */
import type { components, paths } from '../../generated/openapi.js'

type Schemas = components['schemas']
type A2ATaskResponse = Schemas['A2ATaskResponse']

/** The statuses of an A2A task (the contract's `A2ATaskStatus`); `completed`, `failed` and `canceled` are final. */
export type A2ATaskStatus = Schemas['A2ATaskStatus']

/** The signed receipt an attested A2A response carries (the contract's `A2AReceipt`). */
export type A2AReceipt = Schemas['A2AReceipt']

/**
 * The contract's `A2ATaskResponse` with `status` an {@link A2ATaskStatus} and `receipt` an {@link A2AReceipt}
 * (`null`, or absent, when the response is unattested).
 */
export type A2ATask = {
  [K in keyof A2ATaskResponse]: K extends 'status' ? A2ATaskStatus : K extends 'receipt' ? A2AReceipt | null : A2ATaskResponse[K]
}

/** `T` with every `A2ATaskResponse` in it (at any depth) replaced by {@link A2ATask}. */
type NarrowA2ATasks<T> = T extends A2ATaskResponse ? A2ATask : T extends object ? { [K in keyof T]: NarrowA2ATasks<T[K]> } : T

/** The contract's `paths`, with the A2A task responses narrowed: what {@link ApiClient} is typed by. */
export type ClientPaths = NarrowA2ATasks<paths>
