import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli, spawnServer } from '../helpers/cli.js'

const TOKEN = 'receipts-e2e-token-0123456789'

describe('receipts end to end: send, complete, verify offline with the CLI, rotate keys', () => {
  const dir = mkdtempSync(join(tmpdir(), 'receipts-e2e-'))
  const env = { BERNSTEIN_DATA_DIR: join(dir, 'data'), BERNSTEIN_AUTH_TOKEN: TOKEN }
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }
  let n = 0
  /** Writes a wire body and its receipt to files, as a caller would keep them. */
  function keep(body: string): { response: string; receipt: string } {
    n += 1
    const response = join(dir, `response-${n}.json`)
    const receipt = join(dir, `receipt-${n}.json`)
    writeFileSync(response, body)
    writeFileSync(receipt, JSON.stringify((JSON.parse(body) as { receipt: unknown }).receipt))
    return { response, receipt }
  }

  it('verifies acceptance and completion receipts against the published JWKS, before and after a key rotation', async () => {
    let server = await spawnServer(env)
    const jwksUrl = `${server.url}/.well-known/agent.json/keys`
    const sent = await (
      await fetch(`${server.url}/a2a/tasks/send`, { method: 'POST', headers, body: JSON.stringify({ sender: 'peer', message: 'ship it ✓' }) })
    ).text()
    const accepted = keep(sent)
    const ok = await runCli(['--json', 'a2a', 'verify', '--receipt', accepted.receipt, '--response', accepted.response, '--jwks-url', jwksUrl], env)
    expect(ok.code).toBe(0)
    expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, key_pinned: true })

    // One byte changed in the response, or in the receipt: refused with the right reason.
    writeFileSync(join(dir, 'tampered.json'), sent.replace('ship it', 'ship It'))
    const badResponse = await runCli(
      ['--json', 'a2a', 'verify', '--receipt', accepted.receipt, '--response', join(dir, 'tampered.json'), '--jwks-url', jwksUrl],
      env,
    )
    expect(badResponse.code).toBe(1)
    expect(JSON.parse(badResponse.stdout).failures[0]).toMatch(/^content_hash mismatch: response hashes to sha256:/)
    const receipt = JSON.parse(JSON.stringify((JSON.parse(sent) as { receipt: Record<string, string> }).receipt)) as Record<string, string>
    receipt['entry_hash'] = receipt['entry_hash']!.replace(/.$/, (c) => (c === '0' ? '1' : '0'))
    writeFileSync(join(dir, 'forged-receipt.json'), JSON.stringify(receipt))
    const badReceipt = await runCli(
      ['--json', 'a2a', 'verify', '--receipt', join(dir, 'forged-receipt.json'), '--response', accepted.response, '--jwks-url', jwksUrl],
      env,
    )
    expect(badReceipt.code).toBe(1)
    expect(JSON.parse(badReceipt.stdout).failures).toContain('head_signature: head_signature.signature_b64 does not verify against head_sha256')

    // Complete the task; the A2A task now carries a completion receipt that verifies too.
    const { id, bernstein_task_id: taskId } = JSON.parse(sent) as { id: string; bernstein_task_id: string }
    await fetch(`${server.url}/tasks/${taskId}/complete`, { method: 'POST', headers, body: JSON.stringify({ result_summary: 'shipped' }) })
    const final = await (await fetch(`${server.url}/a2a/tasks/${id}`, { headers })).text()
    expect(JSON.parse(final)).toMatchObject({ status: 'completed' })
    const completed = keep(final)
    expect((await runCli(['a2a', 'verify', '--receipt', completed.receipt, '--response', completed.response, '--jwks-url', jwksUrl], env)).code).toBe(0)
    const oldKid = (JSON.parse(final) as { receipt: { kid: string } }).receipt.kid

    // Rotate, restart: old receipts still verify (the old key stays published), new ones use the new key.
    await server.stop()
    const rotated = await runCli(['--json', 'keys', 'rotate', '--key', 'receipt'], env)
    expect(rotated.code).toBe(0)
    server = await spawnServer(env)
    const jwksAfter = `${server.url}/.well-known/agent.json/keys`
    expect((await runCli(['a2a', 'verify', '--receipt', completed.receipt, '--response', completed.response, '--jwks-url', jwksAfter], env)).code).toBe(0)
    const fresh = keep(
      await (await fetch(`${server.url}/a2a/tasks/send`, { method: 'POST', headers, body: JSON.stringify({ sender: 'peer', message: 'again' }) })).text(),
    )
    const freshReceipt = JSON.parse(readFileSync(fresh.receipt, 'utf8')) as { kid: string }
    expect(freshReceipt.kid).not.toBe(oldKid)
    expect((await runCli(['a2a', 'verify', '--receipt', fresh.receipt, '--response', fresh.response, '--jwks-url', jwksAfter], env)).code).toBe(0)
    await server.stop()
  }, 180_000)
})
