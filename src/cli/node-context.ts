import { loadConfig } from '../config.js'
import { type Node, openNode } from '../node.js'

export interface NodeOptions {
  /** A `--peer-token` given for this run: presented to every peer instead of BERNSTEIN_PEER_TOKEN(S); never stored. */
  readonly peerToken?: string | null
}

/** Runs `work` with this node (keys, audit key, database and services as the server has them), without HTTP. */
export async function withNode<T>(work: (node: Node) => Promise<T>, options: NodeOptions = {}): Promise<T> {
  const node = await openNode(loadConfig(), { peerToken: options.peerToken ?? null })
  try {
    return await work(node)
  } finally {
    await node.close()
  }
}
