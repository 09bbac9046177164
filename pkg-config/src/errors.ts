// Errors: one class per stable code, all `HudiError`s. The engine's errors cross the wasm
// boundary as plain `Error`s carrying `code` and `object`; `toHudiError` gives them their class.

export type ErrorCode =
  | 'NOT_FOUND'
  | 'ACCESS_DENIED'
  | 'CORRUPT'
  | 'UNSUPPORTED'
  | 'INVALID_ARGUMENT'
  | 'INVALID_INPUT'
  | 'CONFLICT'
  | 'ABORTED'
  | 'READ_ONLY'
  | 'IO';

export class HudiError extends Error {
  /** Stable machine-readable code (the same as the CLI's). */
  readonly code: ErrorCode;
  /** The file, object or instant the error is about, relative to the table's base path. */
  readonly object: string | undefined;

  constructor(message: string, code: ErrorCode, object?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.object = object;
  }

  // Literal names: a minifier renames classes, so `constructor.name` would not survive.
  override get name(): string {
    return NAMES[this.code] ?? 'HudiError';
  }
}

const NAMES: Record<ErrorCode, string> = {
  NOT_FOUND: 'NotFoundError',
  ACCESS_DENIED: 'AccessDeniedError',
  CORRUPT: 'CorruptError',
  UNSUPPORTED: 'UnsupportedError',
  INVALID_ARGUMENT: 'InvalidArgumentError',
  INVALID_INPUT: 'InvalidInputError',
  CONFLICT: 'ConflictError',
  ABORTED: 'AbortError',
  READ_ONLY: 'ReadOnlyError',
  IO: 'IoError',
};

export class NotFoundError extends HudiError {
  constructor(message: string, object?: string, options?: { cause?: unknown }) {
    super(message, 'NOT_FOUND', object, options);
  }
}
export class AccessDeniedError extends HudiError {
  constructor(message: string, object?: string, options?: { cause?: unknown }) {
    super(message, 'ACCESS_DENIED', object, options);
  }
}
export class CorruptError extends HudiError {
  constructor(message: string, object?: string, options?: { cause?: unknown }) {
    super(message, 'CORRUPT', object, options);
  }
}
export class UnsupportedError extends HudiError {
  constructor(message: string, object?: string, options?: { cause?: unknown }) {
    super(message, 'UNSUPPORTED', object, options);
  }
}
export class InvalidArgumentError extends HudiError {
  constructor(message: string, object?: string, options?: { cause?: unknown }) {
    super(message, 'INVALID_ARGUMENT', object, options);
  }
}
/** Rows handed to a write that do not fit the table. `row` (0-based, in the rows given) and
 *  `column` say where, when the check could tell. */
export class InvalidInputError extends HudiError {
  row: number | undefined;
  column: string | undefined;
  constructor(message: string, object?: string, options?: { cause?: unknown; row?: number; column?: string }) {
    super(message, 'INVALID_INPUT', object, options);
    const m = /\brow (\d+)/.exec(message);
    const c = /\bcolumn "((?:[^"\\]|\\.)*)"/.exec(message);
    this.row = options?.row ?? (m ? Number(m[1]) : undefined);
    this.column = options?.column ?? (c ? c[1] : undefined);
  }
}
/** A concurrent writer got there first. `instant` is the other writer's instant (or the
 *  pending plan in the way), when the engine named it. */
export class ConflictError extends HudiError {
  instant: string | undefined;
  constructor(message: string, object?: string, options?: { cause?: unknown }) {
    super(message, 'CONFLICT', object, options);
    this.instant = /\b(\d{17})\b/.exec(`${object ?? ''} ${message}`)?.[1];
  }
}
/** The signal fired. As the platform's aborts: `name` is `'AbortError'` (`'TimeoutError'` for
 *  `AbortSignal.timeout()`) and `cause` is `signal.reason`; the class and `code` `'ABORTED'`
 *  are the package's. For a write aborted before its commit point, `rolledBack` lists the
 *  instants of it that were rolled back (empty when it had written nothing), and `pending` the
 *  ones left for the next writer (multi-writer / LAZY tables, or a failed rollback). */
export class AbortedError extends HudiError {
  rolledBack: string[] = [];
  pending: string[] = [];
  constructor(message: string, object?: string, options?: { cause?: unknown }) {
    super(message, 'ABORTED', object, options);
  }

  override get name(): string {
    return (this.cause as { name?: unknown } | undefined)?.name === 'TimeoutError' ? 'TimeoutError' : 'AbortError';
  }
}
/** A write to a table opened read-only: plain HTTP(S), a zip or local files. Open it over S3
 *  (credentials or presigned URLs) or a storage object with `put` and `delete`. */
export class ReadOnlyError extends HudiError {
  constructor(message: string, object?: string, options?: { cause?: unknown }) {
    super(message, 'READ_ONLY', object, options);
  }
}
export class IoError extends HudiError {
  constructor(message: string, object?: string, options?: { cause?: unknown }) {
    super(message, 'IO', object, options);
  }
}

const classes: Record<ErrorCode, new (m: string, o?: string, opts?: { cause?: unknown }) => HudiError> = {
  NOT_FOUND: NotFoundError,
  ACCESS_DENIED: AccessDeniedError,
  CORRUPT: CorruptError,
  UNSUPPORTED: UnsupportedError,
  INVALID_ARGUMENT: InvalidArgumentError,
  INVALID_INPUT: InvalidInputError,
  CONFLICT: ConflictError,
  ABORTED: AbortedError,
  READ_ONLY: ReadOnlyError,
  IO: IoError,
};

/** The `HudiError` for a code (unknown codes become `IO`). */
export function hudiError(code: string, message: string, object?: string, cause?: unknown): HudiError {
  const Class = classes[code as ErrorCode] ?? IoError;
  return new Class(message, object, cause === undefined ? undefined : { cause });
}

/** Whatever was thrown (an engine error, a DOMException from an abort, anything) as a
 *  HudiError. With the call's `signal` fired, the error is its abort, caused by its reason
 *  (whatever the engine or storage said on the way out). */
export function toHudiError(e: unknown, signal?: AbortSignal): HudiError {
  if (signal?.aborted && (e === signal.reason || (e as { code?: unknown })?.code === 'ABORTED' || (e as { name?: unknown })?.name === 'AbortError')) {
    if (e instanceof AbortedError) {
      if (e.cause !== signal.reason) Object.defineProperty(e, 'cause', { value: signal.reason, configurable: true, writable: true });
      return e;
    }
    const why = (signal.reason as { message?: unknown } | undefined)?.message ?? signal.reason;
    return new AbortedError(`aborted: ${String(why ?? 'the operation was aborted')}`, undefined, { cause: signal.reason });
  }
  if (e instanceof HudiError) return e;
  const o = (e ?? {}) as { code?: unknown; object?: unknown; message?: unknown; name?: unknown };
  if (o.name === 'AbortError' || o.name === 'TimeoutError') {
    return new AbortedError(`aborted: ${String(o.message ?? 'the operation was aborted')}`, undefined, { cause: e });
  }
  const message = typeof o.message === 'string' ? o.message : String(e);
  const code = typeof o.code === 'string' && o.code in classes ? o.code : 'IO';
  const object = typeof o.object === 'string' ? o.object : undefined;
  return hudiError(code, message, object, e);
}
