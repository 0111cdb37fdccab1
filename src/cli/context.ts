import type { Command } from 'commander'
import { type Config, loadConfig } from '../config.js'
import { type Node, openNode, openNodeStore } from '../node.js'
import type { Store } from '../store/store.js'
import type { ReportContext } from './failure.js'
import { wantsJson } from './output.js'

/** `--json` among the arguments (before a `--`): how to report a usage error commander finds before any action runs. */
function jsonInArguments(argv: readonly string[]): boolean {
  const end = argv.indexOf('--')
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json')
}

type LoadedConfig = { readonly ok: true; readonly config: Config } | { readonly ok: false; readonly error: unknown }

/**
 * What one run of the CLI shares between its commands: the configuration, read once before the action (commander's
 * `preAction` hook), and whether `--json` was given. A configuration that does not load is reported by the commands
 * that need it, so that the offline ones (`interop`, `a2a verify`, `lineage … --file`) work whatever the environment.
 */
export class CliContext {
  #json: boolean
  #loaded: LoadedConfig | undefined
  #kept = ''
  readonly #env: NodeJS.ProcessEnv
  readonly #cwd: string

  constructor(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()) {
    this.#json = jsonInArguments(argv.slice(2))
    this.#env = env
    this.#cwd = cwd
  }

  /** The `preAction` hook: reads the configuration and the parsed `--json`. */
  prepare(action: Command): void {
    this.#json = wantsJson(action)
    this.#load()
  }

  get json(): boolean {
    return this.#json
  }

  /** The configuration; throws what reading it threw (a ConfigError naming the variable). */
  get config(): Config {
    const loaded = this.#loaded ?? this.#load()
    if (!loaded.ok) throw loaded.error
    return loaded.config
  }

  #load(): LoadedConfig {
    let loaded: LoadedConfig
    try {
      loaded = { ok: true, config: loadConfig(this.#env, this.#cwd) }
    } catch (error) {
      loaded = { ok: false, error }
    }
    this.#loaded = loaded
    return loaded
  }

  /** Keeps what commander prints on stdout (help, the version) with --json, for the one object of the run. */
  keepOutput(text: string): void {
    this.#kept += text
  }

  /** How `main` reports a failure of this run. */
  get report(): ReportContext {
    return { json: this.#json, databaseUrl: this.#loaded?.ok ? this.#loaded.config.databaseUrl : null, kept: this.#kept }
  }

  /** Runs `work` on the node's database, at the latest schema, and closes it. For commands that need no keys. */
  async withStore<T>(work: (store: Store, config: Config) => Promise<T>): Promise<T> {
    const config = this.config
    const { store } = await openNodeStore(config)
    try {
      return await work(store, config)
    } finally {
      await store.close()
    }
  }

  /**
   * Runs `work` with this node (keys, audit key, database and services as the server has them, without HTTP) and
   * closes it. `peerToken` is a `--peer-token` given for this run.
   */
  async withNode<T>(work: (node: Node) => Promise<T>, options: { peerToken?: string | null } = {}): Promise<T> {
    const node = await openNode(this.config, { peerToken: options.peerToken ?? null })
    try {
      return await work(node)
    } finally {
      await node.close()
    }
  }
}
