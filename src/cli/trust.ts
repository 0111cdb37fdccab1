/**
 * Key pinning, one rule for every offline verification of the CLI (`interop a2a verify` for a capability card,
 * `a2a verify` for a receipt): a signature proves only that whoever holds the signing key signed, so without a pinned
 * key the verdict is a failure of the check {@link TRUST_CHECK}, unless `--trust-on-first-use` is given; then it
 * passes, and says in text (a `warning:` line) and in JSON (`trust: "first-use"`, `key_pinned: false`, `warning`)
 * that the key was not pinned.
 *
 * @module
 */
import { Option } from 'commander'
import { printJson, printLines } from './output.js'

/** How the key of a verdict that passed was trusted: `--json`'s `trust` field. */
export type Trust = 'pinned' | 'first-use'

/** The name of the check that fails without a pinned key, or with a key that is not the pinned one. */
export const TRUST_CHECK = 'trusted_issuer'

/** `--trust-on-first-use`, refused together with any of the options that pin a key (their attribute names). */
export function trustOnFirstUseOption(subject: string, pinOptions: readonly string[]): Option {
  return new Option('--trust-on-first-use', `accept the ${subject}'s own key without a pinned one (reported as not pinned)`).conflicts([...pinOptions])
}

/** What to pin a key with, and what the verified thing calls its own key: how the failure and warning read. */
export interface PinWording {
  /** `card`, `receipt`. */
  readonly subject: string
  /** The options that pin a key, as the user types them: `--trusted-fingerprint`. */
  readonly pinWith: string
}

/** The failure without a pinned key and without `--trust-on-first-use`; `ownKey` identifies the key the thing carries. */
export function notPinnedFailure(wording: PinWording, ownKey: string): string {
  return `no pinned key: pin the signer's key with ${wording.pinWith}, or accept this ${wording.subject}'s own key (${ownKey}) with --trust-on-first-use`
}

/** The warning of a verdict that passed on the thing's own key (`--trust-on-first-use`). */
export function firstUseWarning(wording: PinWording): string {
  return `the key is not pinned (trust-on-first-use): the ${wording.subject} was verified against its own key only; pin it with ${wording.pinWith} from now on`
}

/** What a verification that passed shows: its fields with `--json`, a headline and detail lines in text. */
export interface PassedVerdict {
  readonly fields: Readonly<Record<string, unknown>>
  readonly headline: string
  readonly details: readonly string[]
}

/** Prints a verdict that passed, with how its key was trusted (and the first-use warning when it was not pinned). */
export function printPassedVerdict(json: boolean, pinned: boolean, wording: PinWording, verdict: PassedVerdict): void {
  const trust: Trust = pinned ? 'pinned' : 'first-use'
  const warning = pinned ? null : firstUseWarning(wording)
  if (json) return printJson({ ok: true, ...verdict.fields, key_pinned: pinned, trust, ...(warning !== null && { warning }) })
  printLines(verdict.headline, ...verdict.details, `  trust: ${trust}`, ...(warning === null ? [] : [`  warning: ${warning}`]))
}
