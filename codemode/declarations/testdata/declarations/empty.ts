declare const empty: {
  /** No inputSchema at all. */
  no_schema(input?: {}): Promise<unknown>;
  /** inputSchema is null. */
  null_schema(input?: {}): Promise<unknown>;
  /** inputSchema is {}. */
  empty_schema(input?: {}): Promise<unknown>;
  /** inputSchema is true. */
  true_schema(input?: {}): Promise<unknown>;
  /** inputSchema is a string. */
  string_schema(input?: {}): Promise<unknown>;
  /** inputSchema is an array. */
  array_schema(input?: {}): Promise<unknown>;
  /** inputSchema describes a string. */
  not_object(input?: {}): Promise<unknown>;
  /** Only type object: any properties. */
  bare_object(input?: { [key: string]: unknown }): Promise<unknown>;
  /** No properties: no arguments. */
  no_properties(input?: {}): Promise<unknown>;
  /** Nothing required: the argument is optional. */
  all_optional(input?: { verbose?: boolean }): Promise<unknown>;
  /** outputSchema {} is unknown. */
  empty_output(input?: {}): Promise<unknown>;
  /** outputSchema of any object. */
  object_output(input?: {}): Promise<EmptyObjectOutputOutput>;
  /** Calls the backend tool "". */
  _(input?: {}): Promise<unknown>;
};
type EmptyObjectOutputOutput = { [key: string]: unknown };
