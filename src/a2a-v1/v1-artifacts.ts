/**
 * A2A v1.0 artifacts stored as A2A artifacts of this node. An artifact of the seed surface is one text (`data`
 * with a `content_type`); a v1 artifact with parts that are not one text (a file as bytes or a URL, structured
 * data, several parts, chunks) is stored as one artifact whose content type is {@link V1_ARTIFACT_MEDIA_TYPE} and
 * whose data is the v1 artifact as JSON. Both surfaces show it (the seed surface as that JSON), receipts cover it,
 * and v1 reads turn it back into the artifact, chunks of one `artifactId` joined.
 *
 * @module
 */
import type { A2AArtifact } from '../a2a/a2a-task.js'
import { codePointLength } from '../text/unicode.js'
import type { V1Artifact } from './a2a-v1-wire.js'
import type { ArtifactUpdate } from './executor/agent-executor.js'

export const V1_ARTIFACT_MEDIA_TYPE = 'application/vnd.bernstein.a2a-v1-artifact+json'

/** A v1 artifact (or one chunk of it) as stored in the data of an A2A artifact: what an executor adds, with its id. */
export type StoredV1Artifact = ArtifactUpdate & { readonly artifactId: string }

/** The stored form of a v1 artifact (what {@link artifactsToWire} reads back). */
export function storedV1Artifact(artifact: StoredV1Artifact): Pick<A2AArtifact, 'name' | 'contentType' | 'data'> {
  return { name: artifact.name ?? artifact.artifactId, contentType: V1_ARTIFACT_MEDIA_TYPE, data: JSON.stringify(artifact) }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
const optional = (value: unknown, check: (value: unknown) => boolean): boolean => value === undefined || check(value)
const isString = (value: unknown): value is string => typeof value === 'string'
const stringOfAtMost = (max: number) => (value: unknown) => isString(value) && codePointLength(value) <= max

/** The contract's `A2AV1Part`: exactly one of `text`, `raw`, `url` or `data`, and the optional fields of their types. */
function isPart(value: unknown): boolean {
  if (!isObject(value)) return false
  const kinds = ['text', 'raw', 'url', 'data'].filter((kind) => value[kind] !== undefined)
  return (
    kinds.length === 1 &&
    optional(value['text'], isString) &&
    optional(value['raw'], isString) &&
    optional(value['url'], stringOfAtMost(8000)) &&
    optional(value['metadata'], isObject) &&
    optional(value['filename'], stringOfAtMost(1000)) &&
    optional(value['mediaType'], stringOfAtMost(200))
  )
}

/**
 * A stored v1 artifact, when `data` is one as the contract's `A2AV1Artifact` describes it. The media type is not
 * reserved, so the seed surface may store anything under it (`POST /a2a/tasks/{id}/artifacts`); what is not a
 * well-formed v1 artifact is shown as the text it is, never passed on to fail the response's validation.
 */
function decode(data: string): StoredV1Artifact | null {
  let value: unknown
  try {
    value = JSON.parse(data)
  } catch {
    return null
  }
  if (
    isObject(value) &&
    isString(value['artifactId']) &&
    Array.isArray(value['parts']) &&
    value['parts'].every(isPart) &&
    optional(value['name'], isString) &&
    optional(value['description'], isString) &&
    optional(value['metadata'], isObject) &&
    optional(value['append'], (append) => typeof append === 'boolean') &&
    optional(value['lastChunk'], (last) => typeof last === 'boolean')
  ) {
    return value as unknown as StoredV1Artifact
  }
  return null
}

/** One stored A2A artifact as a v1 artifact update: the artifact (or chunk) and whether it appends to an earlier one. */
export interface V1ArtifactChunk {
  readonly artifact: V1Artifact
  readonly append: boolean
  readonly lastChunk: boolean
}

/**
 * The A2A artifact at `index` of a task as v1 sees it: a plain artifact is one text part (its id is its position,
 * stable since artifacts are only appended); a stored v1 artifact is itself, a chunk when it says `append`.
 */
export function artifactChunk(a2aTaskId: string, artifact: A2AArtifact, index: number): V1ArtifactChunk {
  const stored = artifact.contentType === V1_ARTIFACT_MEDIA_TYPE ? decode(artifact.data) : null
  if (stored === null) {
    return {
      artifact: { artifactId: `${a2aTaskId}-artifact-${index}`, name: artifact.name, parts: [{ text: artifact.data, mediaType: artifact.contentType }] },
      append: false,
      lastChunk: true,
    }
  }
  return {
    artifact: {
      artifactId: stored.artifactId,
      ...(stored.name !== undefined && { name: stored.name }),
      ...(stored.description !== undefined && { description: stored.description }),
      parts: [...stored.parts],
      ...(stored.metadata !== undefined && { metadata: { ...stored.metadata } }),
    },
    append: stored.append === true,
    lastChunk: stored.lastChunk !== false,
  }
}

/**
 * The v1 artifacts of an A2A task, in the order they were added; a chunk with `append` adds its parts to the
 * earlier artifact of the same id.
 */
export function artifactsToWire(a2aTaskId: string, artifacts: readonly A2AArtifact[]): V1Artifact[] {
  const out: V1Artifact[] = []
  const byId = new Map<string, number>()
  artifacts.forEach((stored, index) => {
    const { artifact, append } = artifactChunk(a2aTaskId, stored, index)
    const earlier = append ? byId.get(artifact.artifactId) : undefined
    if (earlier !== undefined) {
      const previous = out[earlier]!
      out[earlier] = { ...previous, parts: [...previous.parts, ...artifact.parts] }
      return
    }
    byId.set(artifact.artifactId, out.length)
    out.push(artifact)
  })
  return out
}
