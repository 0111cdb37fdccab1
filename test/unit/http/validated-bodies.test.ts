import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ValidatedBodies } from '../../../src/http/validated-bodies.js'
import { fuzzSettings } from '../../helpers/fuzz.js'

describe('ValidatedBodies', () => {
  it('knows a body only for the operation and status it was passed for', () => {
    const bodies = new ValidatedBodies()
    const key = bodies.keyOf('GET /a2a/tasks/{a2a_task_id}', 200, '{"id":"a"}')
    expect(bodies.has(key)).toBe(false)
    bodies.add(key)
    expect(bodies.has(bodies.keyOf('GET /a2a/tasks/{a2a_task_id}', 200, '{"id":"a"}'))).toBe(true)
    expect(bodies.has(bodies.keyOf('GET /a2a/tasks/{a2a_task_id}', 201, '{"id":"a"}'))).toBe(false)
    expect(bodies.has(bodies.keyOf('GET /api/v1/a2a/tasks/{a2a_task_id}', 200, '{"id":"a"}'))).toBe(false)
    expect(bodies.has(bodies.keyOf('GET /a2a/tasks/{a2a_task_id}', 200, '{"id":"b"}'))).toBe(false)
    expect(bodies.stats).toEqual({ entries: 1, hits: 1 })
  })

  it('keys a body by the SHA-256 of its operation, status and text, so that only the very same text matches', () => {
    const bodies = new ValidatedBodies()
    const expected = (text: string): string => createHash('sha256').update(`GET /x 200\n${text}`, 'utf8').digest('base64')
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), (a, b) => {
        expect(bodies.keyOf('GET /x', 200, a)).toBe(expected(a))
        expect(bodies.keyOf('GET /x', 200, a) === bodies.keyOf('GET /x', 200, b)).toBe(a === b)
      }),
      fuzzSettings(300),
    )
  })

  it('remembers large bodies in the same small space as small ones', () => {
    const bodies = new ValidatedBodies({ capacity: 2 })
    const large = JSON.stringify({ tasks: Array.from({ length: 5000 }, (_, i) => ({ id: String(i).padStart(12, '0') })) })
    bodies.add(bodies.keyOf('GET /tasks', 200, large))
    expect(large.length).toBeGreaterThan(64 * 1024)
    expect(bodies.keyOf('GET /tasks', 200, large).length).toBe(44)
    expect(bodies.has(bodies.keyOf('GET /tasks', 200, large))).toBe(true)
  })

  it('stays within its capacity, letting the least recently used go first', () => {
    const bodies = new ValidatedBodies({ capacity: 3 })
    const key = (n: number): string => bodies.keyOf('GET /x', 200, `"${n}"`)
    for (const n of [1, 2, 3]) bodies.add(key(n))
    expect(bodies.has(key(1))).toBe(true) // 1 is now the most recently used, 2 the least
    bodies.add(key(4))
    expect(bodies.stats).toEqual({ entries: 3, hits: 1 })
    expect([1, 2, 3, 4].map((n) => bodies.has(key(n)))).toEqual([true, false, true, true])
  })

  it('counts a body added twice once, and a refused lookup as no hit', () => {
    const bodies = new ValidatedBodies()
    const key = bodies.keyOf('GET /x', 200, '{}')
    bodies.add(key)
    bodies.add(key)
    expect(bodies.has(bodies.keyOf('GET /x', 200, '[]'))).toBe(false)
    expect(bodies.stats).toEqual({ entries: 1, hits: 0 })
  })
})
