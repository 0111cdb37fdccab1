import type { components, operations } from '../generated/openapi.js'

/** Type helpers over the generated contract, so that no wire shape is written twice. */
export type Schema<N extends keyof components['schemas']> = components['schemas'][N]
export type OperationId = keyof operations

type Op<Id extends OperationId> = operations[Id]

export type JsonBody<Id extends OperationId> =
  Op<Id> extends { requestBody: { content: { 'application/json': infer B } } }
    ? B
    : Op<Id> extends { requestBody?: { content: { 'application/json': infer B } } }
      ? B | undefined
      : undefined

export type PathParams<Id extends OperationId> =
  Op<Id> extends { parameters: { path: infer P } } ? (P extends undefined ? Record<string, never> : NonNullable<P>) : Record<string, never>
export type QueryParams<Id extends OperationId> = Op<Id> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : Record<string, never>

type ContentOf<R> = R extends { content: { 'application/json': infer B } } ? B : undefined

/** Every response an operation documents, as `{ status, body }` pairs checked against the contract. */
export type OperationResult<Id extends OperationId> = {
  [S in keyof Op<Id>['responses'] & number]: {
    readonly status: S
    readonly body: ContentOf<Op<Id>['responses'][S]>
    readonly headers?: Readonly<Record<string, string>>
  }
}[keyof Op<Id>['responses'] & number]

/**
 * A const list of every member of a contract enum, no more and no fewer: the compiler refuses the list otherwise,
 * so a status added to or dropped from `openapi.yaml` is a compile error where the list lives.
 *
 * @example export const TASK_STATUSES = everyMember<Schema<'TaskStatus'>>()(['planned', 'open', …])
 */
export function everyMember<Union extends string>() {
  return <const List extends readonly Union[]>(list: List & ([Union] extends [List[number]] ? unknown : { missing: Exclude<Union, List[number]> })): List =>
    list
}
