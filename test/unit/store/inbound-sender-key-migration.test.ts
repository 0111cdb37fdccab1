import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import type { Connection } from '../../../src/store/connect.js'
import { A2ARepository } from '../../../src/store/a2a.repository.js'
import { testEngines, unmigratedDatabasePerTest } from '../../helpers/engines.js'

const BEFORE = '2026-11-30-005-federation'
const THIS = '2026-11-30-006-inbound-sender-key'
const BEFORE_SIGNING = '2026-12-02-010-a2a-v1'
const SIGNING = '2026-12-02-011-inbound-signing-key'

const openUnmigrated = unmigratedDatabasePerTest()

interface Row {
  id: string
  peer_name: string
  remote_task_id: string
  sender_key?: string
  created_at: number
}

for (const engine of testEngines()) {
  describe(`migration ${THIS} (${engine})`, () => {
    const open = () => openUnmigrated(engine)

    const insert = (connection: Connection, id: string, remoteTaskId: string, createdAt: number, senderKey?: string) =>
      senderKey === undefined
        ? sql`insert into federated_inbound (id, tenant_id, peer_name, remote_task_id, task_id, a2a_task_id, message, role, created_at)
              values (${id}, 'default', 'peerorg', ${remoteTaskId}, ${`t-${id}`}, ${`a-${id}`}, 'm', 'backend', ${createdAt})`.execute(connection.db)
        : sql`insert into federated_inbound (id, tenant_id, peer_name, remote_task_id, task_id, a2a_task_id, message, role, created_at, sender_key)
              values (${id}, 'default', 'peerorg', ${remoteTaskId}, ${`t-${id}`}, ${`a-${id}`}, 'm', 'backend', ${createdAt}, ${senderKey})`.execute(
            connection.db,
          )

    const rows = async (connection: Connection): Promise<Row[]> =>
      (await sql<Row>`select * from federated_inbound order by id`.execute(connection.db)).rows.map((r) => ({ ...r, created_at: Number(r.created_at) }))

    it('keeps every row (sender key empty), then tells deliveries apart by sender key; down keeps the earliest of each', async () => {
      const { connection, migrator } = await open()
      expect((await migrator.migrateTo(BEFORE)).error).toBeUndefined()
      await insert(connection, 'old-1', 'r-1', 100)
      await insert(connection, 'old-2', 'r-2', 101)

      expect((await migrator.migrateTo(THIS)).error).toBeUndefined()
      expect(await rows(connection)).toMatchObject([
        { id: 'old-1', remote_task_id: 'r-1', sender_key: '', task_id: 't-old-1', a2a_task_id: 'a-old-1', created_at: 100 },
        { id: 'old-2', remote_task_id: 'r-2', sender_key: '', created_at: 101 },
      ])
      // The same (tenant, name, remote id) under another key is another delivery; under the same key it is refused.
      await insert(connection, 'new-1', 'r-1', 200, 'sha256:aa')
      await expect(insert(connection, 'new-2', 'r-1', 201, 'sha256:aa')).rejects.toThrow(/unique/i)
      await expect(insert(connection, 'new-3', 'r-2', 202, '')).rejects.toThrow(/unique/i)
      expect((await rows(connection)).map((r) => r.id)).toEqual(['new-1', 'old-1', 'old-2'])

      expect((await migrator.migrateDown()).error).toBeUndefined()
      const after = await rows(connection)
      expect(after.map((r) => r.id)).toEqual(['old-1', 'old-2'])
      expect(after[0]).not.toHaveProperty('sender_key')
      await expect(insert(connection, 'again', 'r-1', 300)).rejects.toThrow(/unique/i)

      // And up again: the rebuilt table migrates like the original one.
      expect((await migrator.migrateToLatest()).error).toBeUndefined()
      expect((await rows(connection)).map((r) => [r.id, r.sender_key])).toEqual([
        ['old-1', ''],
        ['old-2', ''],
      ])
    })

    it(`and ${SIGNING}: rows made before carry no signing key (their tasks stay unbound); down drops the column`, async () => {
      const { connection, migrator } = await open()
      expect((await migrator.migrateTo(BEFORE_SIGNING)).error).toBeUndefined()
      await insert(connection, 'old-1', 'r-1', 100, 'sha256:aa')
      expect((await migrator.migrateTo(SIGNING)).error).toBeUndefined()
      expect(await rows(connection)).toMatchObject([{ id: 'old-1', sender_key: 'sha256:aa', signing_key: null }])
      await sql`update federated_inbound set signing_key = ${'-----BEGIN PUBLIC KEY-----'} where id = 'old-1'`.execute(connection.db)
      const repos = new A2ARepository(connection.db, engine)
      expect(await repos.inboundSigningKey('default', { a2aTaskId: 'a-old-1' })).toBe('-----BEGIN PUBLIC KEY-----')
      expect(await repos.inboundSigningKey('default', { taskId: 't-old-1' })).toBe('-----BEGIN PUBLIC KEY-----')
      expect(await repos.inboundSigningKey('other', { taskId: 't-old-1' })).toBeNull()

      expect((await migrator.migrateTo(BEFORE_SIGNING)).error).toBeUndefined()
      expect((await rows(connection))[0]).not.toHaveProperty('signing_key')
    })
  })
}
