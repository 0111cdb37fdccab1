/**
 * What the demo prints: numbered steps in plain words, the commands it runs (secrets and temporary paths shown as
 * the variables that stand for them), and one line per check. A failed check stops the demo.
 */

/** A check that did not pass: the demo stops, cleans up and exits 1. */
export class CheckFailed extends Error {}

const INDENT = '   '

export class Narrator {
  #checks = 0
  #steps = 0
  readonly #secrets: [string, string][] = []

  /** Prints `value` as `name` from now on (tokens, the temporary directory). */
  alias(value: string, name: string): void {
    this.#secrets.push([value, name])
    this.#secrets.sort((a, b) => b[0].length - a[0].length)
  }

  get checks(): number {
    return this.#checks
  }

  #mask(text: string): string {
    let out = text
    for (const [value, name] of this.#secrets) out = out.split(value).join(name)
    return out
  }

  line(text = ''): void {
    process.stdout.write(`${this.#mask(text)}\n`)
  }

  /** A line printed as is, aliases included (where the reader learns what they stand for). */
  plain(text: string): void {
    process.stdout.write(`${text}\n`)
  }

  /** The next numbered step: its title, then why it matters. */
  step(title: string, ...why: string[]): void {
    this.#steps += 1
    this.line()
    this.line(`${this.#steps}. ${title}`)
    for (const text of why) this.line(`${INDENT}${text}`)
  }

  /** A command as the reader would type it. */
  command(args: readonly string[], env: Readonly<Record<string, string>> = {}): void {
    const vars = Object.entries(env).map(([k, v]) => `${k}=${quote(v)}`)
    this.line(`${INDENT}$ ${[...vars, ...args.map(quote)].join(' ')}`)
  }

  /** An HTTP call and what it answered. */
  http(method: string, url: string, who: string, answer: string): void {
    this.line(`${INDENT}${method} ${url}${who ? ` (${who})` : ''} -> ${answer}`)
  }

  note(text: string): void {
    this.line(`${INDENT}  ${text}`)
  }

  /** Passes or stops the demo: `detail` says what was found, either way. */
  check(passed: boolean, text: string, detail?: string): void {
    this.#checks += 1
    this.line(`${INDENT}${passed ? '✓' : '✗'} ${text}`)
    if (!passed) throw new CheckFailed(`${text}${detail ? `: ${detail}` : ''}`)
  }
}

function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`
}
