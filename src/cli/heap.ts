import { setFlagsFromString } from 'node:v8'

/** How far (percent) V8 may grow the old generation beyond what survived the last full collection. */
export const SERVER_HEAP_GROWING_PERCENT = 100

const FLAG = /(?:^|\s)--heap[-_]growing[-_]percent(?:=|\s|$)/

/**
 * The V8 flag `serve` sets for itself, or null when the operator chose one on Node's command line, which then wins
 * (Node refuses this flag in NODE_OPTIONS, so the command line is the only place to look).
 */
export function heapGrowthFlag(execArgv: readonly string[]): string | null {
  if (execArgv.some((arg) => FLAG.test(arg))) return null
  return `--heap-growing-percent=${SERVER_HEAP_GROWING_PERCENT}`
}

/**
 * Bounds the server's heap growth. Under a burst of requests V8's default lets the old generation grow to several
 * times its live size between full collections (its limit follows allocation speed), and that slack is what
 * becomes resident memory. Measured under sustained load (GET; send): peak RSS 190-196 MB and 207 MB by default,
 * 134-136 and 155 MB at 20 %, 154-155 and 171 MB at 100 %. 20 % cost about a tenth more CPU per request in
 * collections; 100 % (twice the live heap, about 25-40 MB here) is within the noise of the default. The flag is
 * read whenever V8 computes the next limit, so setting it at start takes effect.
 */
export function boundHeapGrowth(): void {
  const flag = heapGrowthFlag(process.execArgv)
  if (flag !== null) setFlagsFromString(flag)
}
