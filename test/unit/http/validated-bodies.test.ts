import { describe, expect, it } from 'vitest'
import { ValidatedBodies } from '../../../src/http/validated-bodies.js'

describe('ValidatedBodies', () => {
  it('knows a body only for the operation and status it was passed for', () => {
    const bodies = new ValidatedBodies()
    const key = bodies.keyOf('GET /a2a/tasks/{a2a_task_id}', 200, '{"id":"a"}')!
    expect(bodies.has(key)).toBe(false)
    bodies.add(key)
    expect(bodies.has(bodies.keyOf('GET /a2a/tasks/{a2a_task_id}', 200, '{"id":"a"}')!)).toBe(true)
    expect(bodies.has(bodies.keyOf('GET /a2a/tasks/{a2a_task_id}', 201, '{"id":"a"}')!)).toBe(false)
    expect(bodies.has(bodies.keyOf('GET /api/v1/a2a/tasks/{a2a_task_id}', 200, '{"id":"a"}')!)).toBe(false)
    expect(bodies.has(bodies.keyOf('GET /a2a/tasks/{a2a_task_id}', 200, '{"id":"b"}')!)).toBe(false)
    expect(bodies.stats).toEqual({ entries: 1, size: key.length, hits: 1 })
  })

  it('does not keep bodies larger than its per-body limit', () => {
    const bodies = new ValidatedBodies({ maxBody: 10 })
    expect(bodies.keyOf('GET /x', 200, '"12345678"')).not.toBeNull()
    expect(bodies.keyOf('GET /x', 200, '"1234567890"')).toBeNull()
  })

  it('stays within its capacity, letting the least recently used go first', () => {
    const key = (n: number): string => `GET /x 200\n"${String(n).padStart(8, '0')}"`
    const size = key(0).length
    const bodies = new ValidatedBodies({ capacity: size * 3 })
    for (const n of [1, 2, 3]) bodies.add(key(n))
    expect(bodies.has(key(1))).toBe(true) // 1 is now the most recently used, 2 the least
    bodies.add(key(4))
    expect(bodies.stats).toEqual({ entries: 3, size: size * 3, hits: 1 })
    expect([1, 2, 3, 4].map((n) => bodies.has(key(n)))).toEqual([true, false, true, true])
  })

  it('counts a body added twice once', () => {
    const bodies = new ValidatedBodies()
    bodies.add('GET /x 200\n{}')
    bodies.add('GET /x 200\n{}')
    expect(bodies.stats).toEqual({ entries: 1, size: 'GET /x 200\n{}'.length, hits: 0 })
  })
})
