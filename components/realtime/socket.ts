'use client';
import { io, type Socket } from 'socket.io-client';
import type { UiClientToServerEvents, UiServerToClientEvents } from '../../protocol';

export type UiSocket = Socket<UiServerToClientEvents, UiClientToServerEvents>;

let socket: UiSocket | null = null;

/** The one browser socket to the control plane's /ui namespace (the login cookie authenticates it). */
export function getUiSocket(): UiSocket {
  if (!socket) {
    socket = io('/ui', { withCredentials: true, transports: ['websocket', 'polling'] });
  }
  return socket;
}
