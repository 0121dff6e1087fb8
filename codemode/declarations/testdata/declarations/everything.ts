declare const everything: {
  /** Echoes back the input string */
  echo(input: { /** Message to echo */ message: string }): Promise<unknown>;
  /**
   * Returns the sum of two numbers
   * Calls the backend tool "get-sum".
   */
  get_sum(input: { /** First number */ a: number; /** Second number */ b: number }): Promise<unknown>;
  /**
   * Returns a tiny MCP logo image.
   * Calls the backend tool "get-tiny-image".
   */
  get_tiny_image(input?: {}): Promise<unknown>;
  /**
   * Demonstrates a long running operation with progress updates.
   * Calls the backend tool "trigger-long-running-operation".
   */
  trigger_long_running_operation(input?: {
    /**
     * Duration of the operation in seconds
     * @default 10
     */
    duration?: number;
    /**
     * Number of steps in the operation
     * @default 5
     */
    steps?: number;
  }): Promise<unknown>;
  /**
   * Demonstrates how annotations can be used to provide metadata about content.
   * Calls the backend tool "get-annotated-message".
   */
  get_annotated_message(input: {
    /** Type of message to demonstrate different annotation patterns */
    messageType: "error" | "success" | "debug";
    /**
     * Whether to include an example image
     * @default false
     */
    includeImage?: boolean;
  }): Promise<unknown>;
  /**
   * Returns a resource reference that can be used by MCP clients
   * Calls the backend tool "get-resource-reference".
   */
  get_resource_reference(input: {
    /** @default "Text" */
    resourceType?: "Text" | "Blob";
    /** ID of the text resource to fetch (exclusiveMinimum: 0) */
    resourceId: number;
  }): Promise<unknown>;
  /**
   * Returns structured content along with an output schema for client data validation
   * Calls the backend tool "get-structured-content".
   */
  get_structured_content(input: { /** Choose city */ location: "New York" | "Chicago" | "Los Angeles" }): Promise<EverythingGetStructuredContentOutput>;
  /**
   * Compresses a single file using gzip compression. Depending upon the selected output type, returns either the compressed data as a gzipped resource or a resource link, allowing it to be downloaded in a subsequent request during the current session.
   * Calls the backend tool "gzip-file-as-resource".
   */
  gzip_file_as_resource(input: {
    /**
     * Name of the output file
     * @default "README.md.gz"
     */
    name?: string;
    /** URL or data URI of the file content to compress (format: uri) */
    data: string;
    /**
     * How the resulting gzipped file should be returned. 'resourceLink' returns a link to a resource that can be read later, 'resource' returns a full resource object.
     * @default "resourceLink"
     */
    outputType?: "resourceLink" | "resource";
  }): Promise<unknown>;
  /**
   * Toggles simulated, random-leveled logging on or off.
   * Calls the backend tool "toggle-simulated-logging".
   */
  toggle_simulated_logging(input?: {}): Promise<unknown>;
};
type EverythingGetStructuredContentOutput = {
  /** Temperature in celsius */
  temperature: number;
  /** Weather conditions description */
  conditions: string;
  /** Humidity percentage */
  humidity: number;
};
