import { describe, expect, it } from 'vitest'
import { integer, nullable, rowMapping, sameNames, snakeCase } from '../../../src/store/row-mapping.js'

interface Thing {
  readonly id: string
  readonly a2aTaskId: string
  readonly remoteA2ATaskId: string | null
  readonly createdAt: number
  readonly closedAt: number | null
  readonly label: string
}

interface ThingRow {
  id: string
  a2a_task_id: string
  remote_a2a_task_id: string | null
  created_at: number
  closed_at: number | null
  label: string
}

describe('the naming rule of columns', () => {
  it.each([
    ['id', 'id'],
    ['tenantId', 'tenant_id'],
    ['a2aTaskId', 'a2a_task_id'],
    ['remoteA2ATaskId', 'remote_a2_a_task_id'],
  ])('%s → %s', (field, column) => {
    expect(snakeCase(field)).toBe(column)
  })

  it('sameNames maps each field to its rule-named column', () => {
    expect(sameNames('id', 'tenantId')).toEqual({ id: 'id', tenantId: 'tenant_id' })
  })
})

describe('rowMapping', () => {
  // The forms a mapping has: rule-named as is, a named column, a conversion into the rule-named column.
  const THING = rowMapping<Thing, ThingRow>()({
    ...sameNames('id', 'a2aTaskId'),
    remoteA2ATaskId: 'remote_a2a_task_id',
    createdAt: integer,
    closedAt: nullable(integer),
    label: 'label',
  })
  const thing: Thing = { id: 't1', a2aTaskId: 'a1', remoteA2ATaskId: null, createdAt: 5, closedAt: null, label: 'x' }

  it('writes the row by the rule and the named columns, in the mapping order', () => {
    const row = THING.toRow(thing)
    expect(row).toEqual({ id: 't1', a2a_task_id: 'a1', remote_a2a_task_id: null, created_at: 5, closed_at: null, label: 'x' })
    expect(Object.keys(row)).toEqual(['id', 'a2a_task_id', 'remote_a2a_task_id', 'created_at', 'closed_at', 'label'])
  })

  it('reads a row back through the conversions (PostgreSQL returns bigint as a string), ignoring joined columns', () => {
    const row = { id: 't1', a2a_task_id: 'a1', remote_a2a_task_id: 'r', created_at: '5', closed_at: '7', label: 'x', joined: 1 } as unknown as ThingRow
    const read = THING.toDomain(row)
    expect(read).toEqual({ ...thing, remoteA2ATaskId: 'r', closedAt: 7 })
    expect(Object.keys(read)).toEqual(['id', 'a2aTaskId', 'remoteA2ATaskId', 'createdAt', 'closedAt', 'label'])
  })
})
