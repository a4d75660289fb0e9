// Types of each operation's query, path and 200 body, read from the generated `paths` (schema.d.ts).
import type { paths } from './schema.d.ts';

/** Every path of the document that has a GET operation. */
export type Path = { [P in keyof paths]: paths[P] extends { get: object } ? P : never }[keyof paths];
type Get<P extends Path> = paths[P]['get'];

/** The query parameters of a path (never when it takes none). */
export type Query<P extends Path> = NonNullable<Get<P>['parameters']['query']>;
/** The body of a path's 200 answer: the envelope (data, meta and, for collections, pagination). */
export type Body<P extends Path> = Get<P>['responses'][200]['content']['application/json'];

/** Paths whose answers are paged with pagination.next_cursor. */
export type PagedPath = { [P in Path]: Body<P> extends { pagination: object } ? P : never }[Path];
/** Paths with one `{id}` segment. */
export type IdPath = { [P in Path]: P extends `${string}{id}${string}` ? P : never }[Path];
/** One element of a collection's `data`. */
export type Item<P extends Path> = Body<P> extends { data: (infer T)[] } ? T : never;
/** The filters `.all()` repeats on every page: the query without the cursor it manages itself. */
export type Filters<P extends PagedPath> = Omit<Query<P>, 'cursor'>;

/** The parameters argument of a method: absent without parameters, optional when none is required. */
export type ParamArgs<Q> = [Q] extends [never] ? [] : Partial<Q> extends Q ? [params?: Q] : [params: Q];
