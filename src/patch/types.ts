/**
 * The patch model: one `FilePatch` per file a patch touches, whatever format it came in (git's
 * unified diff, `git diff --binary`, `git format-patch`, a plain unified diff, or Codex's
 * `*** Begin Patch`). Paths are strings in the project's path encoding (as `decodePath` gives
 * them: non-UTF-8 bytes survive as lone surrogates), relative to the repository root,
 * with git's `a/` / `b/` prefix already removed. Content is bytes, exactly as in the patch.
 */

/** One line of a text hunk: its operation and its bytes, line ending included (none when `\ No newline at end of file` followed it). */
export interface HunkLine {
  op: ' ' | '-' | '+';
  text: Uint8Array;
}

/** One `@@ -oldStart,oldLines +newStart,newLines @@` hunk. */
export interface Hunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: HunkLine[];
  /** Context lines before the first change and after the last (git's `leading` / `trailing`). */
  leading: number;
  trailing: number;
  /** 1-based line of the `@@` header in the patch. */
  line: number;
}

/** One hunk of a `GIT binary patch`: the inflated data (the whole new content for `literal`, a git delta for `delta`). */
export interface BinaryHunk {
  kind: 'literal' | 'delta';
  /** The size declared after `literal` / `delta` (the inflated length). */
  size: number;
  data: Uint8Array;
}

/** One Codex update chunk (codex-rs/apply-patch `UpdateFileChunk`): lines are text without their line end. */
export interface CodexChunk {
  context: string | null;
  oldLines: string[];
  newLines: string[];
  endOfFile: boolean;
}

export type FileStatus = 'modify' | 'add' | 'delete' | 'rename' | 'copy';

export interface FilePatch {
  format: 'git' | 'unified' | 'codex';
  status: FileStatus;
  /** The path the patch reads (null for a new file). */
  oldPath: string | null;
  /** The path the patch writes (null for a deleted file). */
  newPath: string | null;
  /** Octal mode strings as git writes them ('100644', '100755', '120000', '160000'); null when the patch does not say. */
  oldMode: string | null;
  newMode: string | null;
  /** `similarity index N%` / `dissimilarity index N%`, when given. */
  similarity: number | null;
  dissimilarity: number | null;
  /** The object ids (possibly abbreviated) of the `index` line, when given. */
  oldOid: string | null;
  newOid: string | null;
  hunks: Hunk[];
  /**
   * Binary content: `forward` / `reverse` hunks of a `GIT binary patch`, or `null` data for
   * "Binary files a/x and b/x differ" (a patch that cannot be applied without the objects).
   * Undefined for a text patch.
   */
  binary?: { forward: BinaryHunk | null; reverse: BinaryHunk | null };
  /** Codex only: the update chunks, or the full content of an added file. */
  codexChunks?: CodexChunk[];
  codexContent?: Uint8Array;
  /** 1-based line in the patch where this file's header starts. */
  line: number;
}

/** What one file becomes once its patch applies. */
export interface FileResult {
  /** The path written (the new path after a rename or copy; the old path of a deletion). */
  path: string;
  /** The path read, when it differs from `path` (rename or copy source) or null for a new file. */
  oldPath: string | null;
  /** The file no longer exists at `path`. */
  deleted: boolean;
  /** The mode of the result ('100644', '100755', '120000'); null when deleted. */
  mode: string | null;
  /** The new content (for a symlink: the target's bytes); null when deleted. */
  content: Uint8Array | null;
  /** For mode 120000: the link target, decoded as a path. */
  symlinkTarget?: string;
  /** A rename: the old path goes away (a copy keeps it). */
  removesOldPath: boolean;
}
