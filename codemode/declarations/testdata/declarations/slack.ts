declare const slack: {
  /** List public or pre-defined channels in the workspace with pagination */
  slack_list_channels(input?: {
    /**
     * Maximum number of channels to return (default 100, max 200)
     * @default 100
     */
    limit?: number;
    /** Pagination cursor for next page of results */
    cursor?: string;
  }): Promise<unknown>;
  /** Post a new message to a Slack channel */
  slack_post_message(input: {
    /** The ID of the channel to post to */
    channel_id: string;
    /** The message text to post */
    text: string;
  }): Promise<unknown>;
  /** Reply to a specific message thread in Slack */
  slack_reply_to_thread(input: {
    /** The ID of the channel containing the thread */
    channel_id: string;
    /** The timestamp of the parent message in the format '1234567890.123456'. Timestamps in the format without the period can be converted by adding the period such that 6 numbers come after it. */
    thread_ts: string;
    /** The reply text */
    text: string;
  }): Promise<unknown>;
  /** Add a reaction emoji to a message */
  slack_add_reaction(input: {
    /** The ID of the channel containing the message */
    channel_id: string;
    /** The timestamp of the message to react to */
    timestamp: string;
    /** The name of the emoji reaction (without ::) */
    reaction: string;
  }): Promise<unknown>;
  /** Get recent messages from a channel */
  slack_get_channel_history(input: {
    /** The ID of the channel */
    channel_id: string;
    /**
     * Number of messages to retrieve (default 10)
     * @default 10
     */
    limit?: number;
  }): Promise<unknown>;
  /** Get a list of all users in the workspace with their basic profile information */
  slack_get_users(input?: {
    cursor?: string;
    /**
     * Maximum number of users to return (default 100, max 200)
     * @default 100
     */
    limit?: number;
  }): Promise<unknown>;
};
