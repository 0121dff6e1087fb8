declare const types: {
  /** Every JSON Schema type and how it reads. */
  types(input: {
    s: string;
    /** (minimum: 0, maximum: 10) */
    i: number;
    n?: number;
    b?: boolean;
    z?: null;
    sn?: string | null;
    multi?: string | number | boolean | null;
    /** When it happened (format: date-time) */
    when?: string;
    /** (format: date) */
    day?: string;
    /** (minLength: 3, maxLength: 3, pattern: ^[A-Z]{3}$) */
    code?: string;
    enumMixed?: "a\"b" | "back\\slash" | "tab\tnew\nline" | "é" | 1 | 2.5 | -3 | 1e3 | true | false | null;
    enumEmpty?: never;
    constString?: "fixed";
    constObject?: { kind: "point"; at: [1, 2]; meta: null };
    nullableOpenAPI?: string | null;
    unknownType?: unknown;
    /** No type at all */
    noType?: unknown;
    anything: unknown;
    nothing: never;
    /** Scores by name */
    map?: { [key: string]: number };
    mapWithProps?: { total?: number } & { [key: string]: number };
    openWithProps?: { id?: string; [key: string]: unknown };
    closed?: { id?: string };
    bare?: { [key: string]: unknown };
    emptyClosed?: {};
    patterns?: { [key: string]: string | number };
    requiredOnly?: { key: unknown; [key: string]: unknown };
    anyItems?: unknown[];
    trueItems?: unknown[];
    nested?: number[][];
    unionArrays?: (string | null)[] | null;
    /** (minItems: 1) */
    objectArray?: { k: string; v?: string }[];
    /**
     * Use s instead
     * @deprecated
     */
    old?: string;
  }): Promise<TypesTypesOutput>;
};
type TypesTypesOutput = { [key: string]: unknown };
