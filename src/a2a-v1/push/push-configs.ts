import type { Schema } from '../../contract.js'
import type { Clock, Ids } from '../../runtime.js'
import type { Repositories, Store } from '../../store/store.js'
import { A2AProtocolError, taskNotFound } from '../a2a-v1-errors.js'
import type { PushConfigRecord } from './push-records.js'
import type { PushTargetGuard } from './push-target-guard.js'
import { type V1TaskScope, assertReachable } from '../task-visibility.js'

export type V1PushConfig = Schema<'A2AV1TaskPushNotificationConfig'>
export type V1PushConfigList = Schema<'A2AV1ListTaskPushNotificationConfigsResponse'>

/** A task holds at most this many configs (each event is delivered to each). */
export const MAX_PUSH_CONFIGS_PER_TASK = 10

/** An RFC 9110 token (an authentication scheme). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
/** What may go into a header value: visible ASCII and spaces (no CR, LF or other controls). */
const HEADER_VALUE = /^[\x20-\x7e]*$/
const CONFIG_ID = /^[A-Za-z0-9._:~-]{1,200}$/

const invalid = (field: string, message: string): A2AProtocolError => new A2AProtocolError('InvalidParams', message, { field })

export function configToWire(record: PushConfigRecord): V1PushConfig {
  return {
    id: record.configId,
    taskId: record.a2aTaskId,
    url: record.url,
    ...(record.token !== null && { token: record.token }),
    ...(record.authScheme !== null && {
      authentication: { scheme: record.authScheme, ...(record.authCredentials !== null && { credentials: record.authCredentials }) },
    }),
  }
}

/**
 * The four push notification config operations, scoped to the caller's tenant: a task of another tenant, or none,
 * or one the caller may not reach (`hidesSignedDelegations`), is `TaskNotFoundError`, and nothing is written.
 */
export class PushConfigService {
  readonly #deps: { readonly store: Store; readonly clock: Clock; readonly ids: Ids; readonly guard: PushTargetGuard }

  constructor(deps: { readonly store: Store; readonly clock: Clock; readonly ids: Ids; readonly guard: PushTargetGuard }) {
    this.#deps = deps
  }

  async #taskExists(repos: Repositories, scope: V1TaskScope, a2aTaskId: string): Promise<void> {
    await assertReachable(repos, scope, a2aTaskId)
    if (!(await repos.a2a.get(scope.tenantId, a2aTaskId))) throw taskNotFound(a2aTaskId)
  }

  /** Creates (or, with the id of an existing one, replaces) a config of the task. The URL is checked first. */
  async create(scope: V1TaskScope, a2aTaskId: string, input: V1PushConfig): Promise<V1PushConfig> {
    if (input.taskId !== undefined && input.taskId !== '' && input.taskId !== a2aTaskId) {
      throw invalid('taskId', `taskId '${input.taskId}' is not the task of the path ('${a2aTaskId}')`)
    }
    const storeWithin = await this.prepare(input)
    const record = await this.#deps.store.transaction(async (repos) => {
      await this.#taskExists(repos, scope, a2aTaskId)
      return storeWithin(repos, scope.tenantId, a2aTaskId)
    })
    return configToWire(record)
  }

  /**
   * Checks a config (its fields, then its URL against the guard) before any transaction, and gives what stores it
   * for a task inside one: CreateTaskPushNotificationConfig, and a config sent inline with SendMessage
   * (`configuration.taskPushNotificationConfig`), stored in the transaction that creates the task so that its
   * first event is delivered too.
   */
  async prepare(input: V1PushConfig): Promise<(repos: Repositories, tenantId: string, a2aTaskId: string) => Promise<PushConfigRecord>> {
    const configId = input.id !== undefined && input.id !== '' ? input.id : this.#deps.ids.shortId() + this.#deps.ids.shortId()
    if (!CONFIG_ID.test(configId)) throw invalid('id', 'id must be 1-200 characters of A-Z a-z 0-9 . _ : ~ -')
    const token = input.token !== undefined && input.token !== '' ? input.token : null
    if (token !== null && !HEADER_VALUE.test(token)) throw invalid('token', 'token must be printable ASCII')
    const scheme = input.authentication?.scheme ?? null
    if (scheme !== null && !TOKEN.test(scheme))
      throw invalid('authentication.scheme', 'authentication.scheme must be an HTTP authentication scheme (e.g. Bearer)')
    const credentials = input.authentication?.credentials ?? null
    if (credentials !== null && !HEADER_VALUE.test(credentials))
      throw invalid('authentication.credentials', 'authentication.credentials must be printable ASCII')
    const target = await this.#deps.guard.check(input.url)
    // A name that does not resolve now is no internal address: it is stored, and each delivery checks it again
    // (and retries while it does not resolve), so creation does not depend on DNS being up at that moment.
    if (!target.ok && target.code !== 'unresolvable') throw new A2AProtocolError('InvalidParams', target.detail, { field: 'url', reason: target.code })
    return async (repos, tenantId, a2aTaskId) => {
      const existing = await repos.a2aV1Push.getConfig(tenantId, a2aTaskId, configId)
      if (!existing && (await repos.a2aV1Push.configsOf(tenantId, a2aTaskId)).length >= MAX_PUSH_CONFIGS_PER_TASK) {
        throw invalid('id', `task '${a2aTaskId}' already has ${MAX_PUSH_CONFIGS_PER_TASK} push notification configs`)
      }
      const stored: PushConfigRecord = {
        tenantId,
        a2aTaskId,
        configId,
        url: input.url,
        token,
        authScheme: scheme,
        authCredentials: scheme === null ? null : credentials,
        createdAt: existing?.createdAt ?? this.#deps.clock.now(),
      }
      await repos.a2aV1Push.upsertConfig(stored)
      return stored
    }
  }

  async get(scope: V1TaskScope, a2aTaskId: string, configId: string): Promise<V1PushConfig> {
    const repos = this.#deps.store.repos
    await this.#taskExists(repos, scope, a2aTaskId)
    const found = await repos.a2aV1Push.getConfig(scope.tenantId, a2aTaskId, configId)
    if (!found) {
      throw new A2AProtocolError('TaskNotFoundError', `Task '${a2aTaskId}' has no push notification config '${configId}'`, { taskId: a2aTaskId, configId })
    }
    return configToWire(found)
  }

  async list(scope: V1TaskScope, a2aTaskId: string): Promise<V1PushConfigList> {
    const repos = this.#deps.store.repos
    await this.#taskExists(repos, scope, a2aTaskId)
    return { configs: (await repos.a2aV1Push.configsOf(scope.tenantId, a2aTaskId)).map(configToWire), nextPageToken: '' }
  }

  /** Deletes the config and its deliveries not yet made. Idempotent for a task the caller sees. */
  async delete(scope: V1TaskScope, a2aTaskId: string, configId: string): Promise<void> {
    await this.#deps.store.transaction(async (repos) => {
      await this.#taskExists(repos, scope, a2aTaskId)
      await repos.a2aV1Push.deleteConfig(scope.tenantId, a2aTaskId, configId)
    })
  }
}
