export interface ApiRecord {
  id: string;
  workspaceId: string;
  name: string;
  createdAt: number;
  deletedAt?: number;
}

export interface RootKeyRecord {
  id: string;
  workspaceId: string;
  name?: string;
  permissions: string[];
  createdAt: number;
}
