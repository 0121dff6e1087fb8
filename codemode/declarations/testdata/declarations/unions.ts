declare const unions: {
  /** List calendar events (pydantic-style optional arguments). */
  list_events(input: {
    calendar_id: string;
    /**
     * Only events starting after this time
     * @default null
     */
    after?: string | null;
    /** @default 50 */
    limit?: number | null;
    /** @default null */
    labels?: string[] | null;
  }): Promise<UnionsListEventsOutput>;
  /** Draw one shape (a discriminated union with oneOf). */
  draw_shape(input: {
    shape: { kind: "circle"; radius: number } | { kind: "rect"; width: number; height: number };
    color?: "red" | "green" | "blue";
  }): Promise<unknown>;
  /** anyOf of scalars and arrays, arrays of unions, and allOf. */
  tag(input: {
    /** One id or a list of ids */
    ids: string | string[];
    values?: (string | number | boolean)[];
    either?: ({ a: string } | { b: number })[];
    owner?: { name: string } & { /** (format: email) */ email: string };
    mixed?: string;
  }): Promise<unknown>;
};
type UnionsListEventsOutput = { result: { id: string; start: string; attendees?: string[] | null }[] };
