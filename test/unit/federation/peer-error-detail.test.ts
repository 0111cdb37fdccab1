import { describe, expect, it } from 'vitest'
import { peerErrorDetail } from '../../../src/federation/peer-client.js'

describe('peerErrorDetail', () => {
  it('keeps a string detail, else the text', () => {
    expect(peerErrorDetail('{"detail":"card rejected"}')).toBe('card rejected')
    expect(peerErrorDetail('{"detail":[{"loc":["body"],"msg":"x","type":"y"}]}')).toBe('{"detail":[{"loc":["body"],"msg":"x","type":"y"}]}')
    expect(peerErrorDetail('null')).toBe('null')
    expect(peerErrorDetail('<html>Bad Gateway</html>')).toBe('<html>Bad Gateway</html>')
  })

  it('cuts a long detail or text at 500 units, marked, never inside a surrogate pair', () => {
    expect(peerErrorDetail('x'.repeat(500))).toBe('x'.repeat(500))
    expect(peerErrorDetail(JSON.stringify({ detail: 'd'.repeat(2000) }))).toBe('d'.repeat(500) + '…')
    // The 500th unit is the high half of an emoji: the whole emoji goes.
    const split = 'a'.repeat(499) + '😀' + 'tail'
    expect(peerErrorDetail(split)).toBe('a'.repeat(499) + '…')
    const whole = 'a'.repeat(498) + '😀' + 'tail'
    expect(peerErrorDetail(whole)).toBe('a'.repeat(498) + '😀…')
    expect(peerErrorDetail(split)).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/)
  })
})
