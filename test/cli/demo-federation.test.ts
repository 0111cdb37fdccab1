import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../helpers/vectors.js'

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** `npm run -s demo:federation` (with `-- --quick`: without the refusals), as a newcomer runs it (the bundle global setup built starts the nodes). */
function runDemo(quick: boolean): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      'npm',
      ['run', '-s', 'demo:federation', ...(quick ? ['--', '--quick'] : [])],
      { cwd: repoRoot, timeout: 110_000, maxBuffer: 4 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr })
      },
    )
  })
}

describe('npm run demo:federation', () => {
  it.each([
    ['the full run, refusals first', false],
    ['the quick run', true],
  ])(
    'delegates from org A to org B, settles it, verifies the receipt and the lineage, and cleans up: %s',
    async (_, quick) => {
      const run = await runDemo(quick)
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0)
      if (quick) {
        expect(run.stdout).toContain('(quick run)')
        expect(run.stdout).not.toContain('Trust fails closed')
      } else {
        expect(run.stdout).not.toContain('(quick run)')
        expect(run.stdout).toContain("✓ B refuses a sender that cannot prove it holds A's key, whatever token it holds")
        expect(run.stdout).toMatch(/✓ A refuses to delegate \(exit 1, ledger row rejected\): .+; B received nothing/)
      }
      expect(run.stdout).toMatch(/✓ delegation \w+ accepted by org-b/)
      expect(run.stdout).toMatch(/✓ completed delegation \w+ in A's federation ledger/)
      expect(run.stdout).toMatch(/✓ verified receipt: B's answer for A2A task \w+ is signed by B's pinned key/)
      expect(run.stdout).toMatch(/✓ org A's whole chain verifies/)
      expect(run.stdout).toMatch(/✓ org B's whole chain verifies/)
      expect(run.stdout).toMatch(/✓ B's boundary entry binds the envelope A sent/)
      expect(run.stdout).toMatch(/All \d+ checks passed in [\d.]+ s\.\n$/)
      expect(run.stdout).not.toContain('✗')
      // The tokens never appear, only the variables that stand for them; the temporary directory is gone.
      expect(run.stdout).toContain('--peer-token $TOKEN_B')
      const work = /DEMO=(\S+)/.exec(run.stdout)?.[1]
      expect(work).toBeDefined()
      expect(existsSync(work!)).toBe(false)
    },
    120_000,
  )
})
