import type { RunningServer } from '@svc/server';

export declare const DEMO_DAYS: number;
export declare const FUNNEL_STEPS: string[];
export declare const DEMO_REPLAYS: number;

export interface DemoEvent {
  user_id: string;
  platform: string;
  country: string;
  event_type: string;
  time: number;
  session_id: number;
  event_properties: Record<string, string | number>;
  insert_id: string;
}

export declare function demoEvents(now?: number): DemoEvent[];

export interface DemoServer {
  server: RunningServer;
  /** The console's page. */
  consoleUrl: string;
  /** The app host (reporting). */
  appUrl: string;
  keys: { apiKey: string; secretKey: string };
  events: DemoEvent[];
  close(): Promise<void>;
}

export declare function startDemoServer(): Promise<DemoServer>;
