/**
 * Before delegating to a peer: fetch its signed capability card and check the signature, the key fingerprint you
 * pinned out of band, and the policies you require.
 *
 *   PEER_FINGERPRINT=sha256:… npx tsx examples/verify-peer-card.ts
 *
 * Without PEER_FINGERPRINT the card is refused as untrusted (carrying a key is not trust) and its fingerprint is
 * printed, to compare with what the peer's operator tells you.
 *
 * In your own project: import { fetchAndVerifyPeerCard } from '@bernstein-a2a/client'
 */
import { fetchAndVerifyPeerCard } from '../src/client/index.js'
import { baseUrl } from './env.js'

const peer = process.env['PEER_URL'] ?? baseUrl
const pinned = process.env['PEER_FINGERPRINT']

// The options are the CLI's flags (`delegate --trusted-fingerprint … --require-cost-cap-usd …`).
const verdict = await fetchAndVerifyPeerCard(peer, {
  trustedFingerprints: pinned ? [pinned] : [],
  requireCostCapUsd: 50,
  requireRedactionTier: 'standard',
  requireSandboxProfile: 'container',
})
if (verdict.ok) {
  const { card } = verdict.value.card
  console.log(
    `trusted: ${card.issuer} (${verdict.value.fingerprint}), cost cap ${card.policies.cost_cap_usd} USD, ${card.policies.redaction_tier} redaction, ${card.policies.sandbox_profile} sandbox`,
  )
} else {
  console.log(`refused: ${verdict.code}: ${verdict.detail}`)
  process.exitCode = 1
}
