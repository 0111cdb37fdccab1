import { A2AProtocolError } from './a2a-v1-errors.js'

/** The A2A protocol versions this node serves (Major.Minor; patch versions are never negotiated). */
export const SUPPORTED_A2A_VERSIONS: readonly string[] = ['1.0']

/**
 * Checks the `A2A-Version` the client sent (the header, else the query parameter). Absent or empty means 0.3 (spec
 * §1.9), which this node does not serve; so is anything that is not 1.0. Throws VersionNotSupportedError.
 */
export function assertSupportedVersion(header: string | string[] | undefined, query: unknown): void {
  const fromHeader = Array.isArray(header) ? header.join(',') : header
  const raw = (fromHeader?.trim() ? fromHeader : typeof query === 'string' ? query : '').trim()
  const version = raw === '' ? '0.3' : raw
  const match = /^(\d{1,4})(?:\.(\d{1,4}))?$/.exec(version)
  const normalised = match === null ? null : `${Number(match[1])}.${Number(match[2] ?? '0')}`
  if (normalised !== null && SUPPORTED_A2A_VERSIONS.includes(normalised)) return
  throw new A2AProtocolError(
    'VersionNotSupportedError',
    `A2A version ${JSON.stringify(version)} is not supported; this node serves ${SUPPORTED_A2A_VERSIONS.join(', ')}`,
    {
      requestedVersion: version.slice(0, 20),
      supportedVersions: SUPPORTED_A2A_VERSIONS.join(','),
    },
  )
}
