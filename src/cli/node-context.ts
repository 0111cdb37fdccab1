import { ReceiptAttestor } from '../receipts/receipt-attestor.js'
import { type Config, defaultPublicBaseUrl } from '../config.js'
import { NodeIdentity } from '../identity/node-identity.js'
import { loadNodeKeys } from '../identity/node-keys.js'
import { ensureAuditKey } from '../lineage/audit-key.js'
import { systemClock } from '../runtime.js'
import { nodeProfile, peerTokenResolver } from '../server.js'
import { type Services, createServices } from '../services.js'
import type { Store } from '../store/store.js'
import { withStore } from './store-context.js'

export interface NodeOptions {
  /** A `--peer-token` given for this run: presented to every peer instead of BERNSTEIN_PEER_TOKEN(S); never stored. */
  readonly peerToken?: string | null
}

/** Runs `work` with this node's services (keys, audit key and database as the server uses them), without HTTP. */
export async function withNode<T>(
  work: (services: Services, context: { config: Config; store: Store; identity: NodeIdentity }) => Promise<T>,
  options: NodeOptions = {},
): Promise<T> {
  return withStore(async (store, config) => {
    const auditKey = ensureAuditKey(config.auditKeyPath)
    const keys = await loadNodeKeys(config.dataDir)
    // Without a server there is no bound port: with BERNSTEIN_PORT=0 this names port 0 (see `delegate`, which refuses that).
    const publicBaseUrl = config.publicBaseUrl ?? defaultPublicBaseUrl(config.host, config.port)
    const identity = new NodeIdentity(store, keys, nodeProfile(config, publicBaseUrl), systemClock)
    const services = createServices({
      store,
      auditKey,
      issuer: config.issuer,
      identity,
      publicBaseUrl,
      attestor: new ReceiptAttestor({ key: keys.receipt, masterKey: auditKey, clock: systemClock }),
      federation: { peerToken: peerTokenResolver(config, options.peerToken ?? null) },
    })
    return work(services, { config, store, identity })
  })
}
