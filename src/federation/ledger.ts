import type { Clock } from '../runtime.js'
import type { FederationRepository } from '../store/federation.repository.js'
import type { Delegation } from './delegation.js'

/** One ledger row being moved along by the delegator or the follower: every change is stamped and saved at once. */
export class LedgerEntry {
  #row: Delegation
  readonly #ledger: FederationRepository
  readonly #clock: Clock

  constructor(row: Delegation, ledger: FederationRepository, clock: Clock) {
    this.#row = row
    this.#ledger = ledger
    this.#clock = clock
  }

  get row(): Delegation {
    return this.#row
  }

  async save(changes: Partial<Delegation>): Promise<Delegation> {
    this.#row = { ...this.#row, ...changes, updatedAt: this.#clock.now() }
    await this.#ledger.save(this.#row)
    return this.#row
  }
}
