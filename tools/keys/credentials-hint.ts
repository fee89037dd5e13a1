/** The key CLI's way around missing credentials, for the one line that reports them. */
export const CREDENTIALS_HINT = 'or use --file for a local key file';
