import type { Browser, BrowserContext, Page } from 'playwright-core';

export declare function openBrowser(): Promise<{ browser: Browser; context: BrowserContext }>;
export declare function signIn(page: Page, keys: { apiKey: string; secretKey: string }): Promise<void>;
export declare function drawSegmentation(
  page: Page,
  choice: { event: string; metric?: string; groupBy?: { owner: 'event' | 'user'; name: string }; kind?: 'line' | 'bars' },
): Promise<void>;
