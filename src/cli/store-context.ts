import { type Config, loadConfig } from '../config.js'
import { connect, databaseOptions, migrateToLatest } from '../store/connect.js'
import { Store } from '../store/store.js'

/**
 * Opens the server's database (the data dir's SQLite file, or DATABASE_URL), brought up to the latest schema,
 * runs `work` and closes it. For commands that operate on a node's state offline.
 */
export async function withStore<T>(work: (store: Store, config: Config) => Promise<T>, options: { migrate?: boolean } = {}): Promise<T> {
  const config = loadConfig()
  const connection = connect(databaseOptions(config))
  try {
    if (options.migrate !== false) {
      const result = await migrateToLatest(connection)
      if (result.error) throw result.error
    }
    return await work(new Store(connection), config)
  } finally {
    await connection.close()
  }
}
