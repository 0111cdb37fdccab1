import { type Config, loadConfig } from '../config.js'
import { openNodeStore } from '../node.js'
import type { Store } from '../store/store.js'

/**
 * Opens the server's database (the data dir's SQLite file, or DATABASE_URL), brought up to the latest schema,
 * runs `work` and closes it. For commands that operate on a node's state offline.
 */
export async function withStore<T>(work: (store: Store, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig()
  const { store } = await openNodeStore(config)
  try {
    return await work(store, config)
  } finally {
    await store.close()
  }
}
