declare const tavily: {
  /**
   * A powerful web search tool that provides comprehensive, real-time results using Tavily's AI search engine. Returns relevant web content with customizable parameters for result count, content type, and domain filtering. Ideal for gathering current information, news, and detailed web content analysis.
   * Calls the backend tool "tavily-search".
   */
  tavily_search(input: {
    /** Search query */
    query: string;
    /**
     * The depth of the search. It can be 'basic' or 'advanced'
     * @default "basic"
     */
    search_depth?: "basic" | "advanced";
    /**
     * The category of the search. This will determine which of our agents will be used for the search
     * @default "general"
     */
    topic?: "general" | "news";
    /**
     * The number of days back from the current date to include in the search results. This specifies the time frame of data to be retrieved. Please note that this feature is only available when using the 'news' search topic
     * @default 3
     */
    days?: number;
    /** The time range back from the current date to include in the search results. This feature is available for both 'general' and 'news' search topics */
    time_range?: "day" | "week" | "month" | "year" | "d" | "w" | "m" | "y";
    /**
     * The maximum number of search results to return (minimum: 5, maximum: 20)
     * @default 10
     */
    max_results?: number;
    /**
     * Include a list of query-related images in the response
     * @default false
     */
    include_images?: boolean;
    /**
     * Include the cleaned and parsed HTML content of each search result
     * @default false
     */
    include_raw_content?: boolean;
    /**
     * A list of domains to specifically include in the search results, if the user asks to search on specific sites set this to the domain of the site
     * @default []
     */
    include_domains?: string[];
    /**
     * List of domains to specifically exclude, if the user asks to exclude a domain set this to the domain of the site
     * @default []
     */
    exclude_domains?: string[];
  }): Promise<unknown>;
  /**
   * A powerful web content extraction tool that retrieves and processes raw content from specified URLs, ideal for data collection, content analysis, and research tasks.
   * Calls the backend tool "tavily-extract".
   */
  tavily_extract(input: {
    /** List of URLs to extract content from */
    urls: string[];
    /**
     * Depth of extraction - 'basic' or 'advanced', if usrls are linkedin use 'advanced' or if explicitly told to use advanced
     * @default "basic"
     */
    extract_depth?: "basic" | "advanced";
    /**
     * Include a list of images extracted from the urls in the response
     * @default false
     */
    include_images?: boolean;
  }): Promise<unknown>;
};

declare const brave: {
  /** Performs a web search using the Brave Search API, ideal for general queries, news, articles, and online content. Use this for broad information gathering, recent events, or when you need diverse web sources. Supports pagination, content filtering, and freshness controls. Maximum 20 results per... */
  brave_web_search(input: {
    /** Search query (max 400 chars, 50 words) */
    query: string;
    /**
     * Number of results (1-20, default 10)
     * @default 10
     */
    count?: number;
    /**
     * Pagination offset (max 9, default 0)
     * @default 0
     */
    offset?: number;
  }): Promise<unknown>;
  /**
   * Searches for local businesses and places using Brave's Local Search API. Best for queries related to physical locations, businesses, restaurants, services, etc. Returns detailed information including:
   * - Business names and addresses
   * - Ratings and review counts
   * - Phone numbers and opening hours
   * Use...
   */
  brave_local_search(input: {
    /** Local search query (e.g. 'pizza near Central Park') */
    query: string;
    /**
     * Number of results (1-20, default 5)
     * @default 5
     */
    count?: number;
  }): Promise<unknown>;
};
