/**
 * client-go's Indexer for one index: which children (by key) belong to which owner (by key), so
 * a snapshot finds a BackupJob's Jobs without a scan of every Job.
 */
export class OwnerIndex {
  private readonly ownerOf = new Map<string, string>();
  private readonly byOwner = new Map<string, Set<string>>();

  /** Records the child's owner (none: forgets the child). */
  set(child: string, owner: string | undefined): void {
    this.delete(child);
    if (owner === undefined) return;
    this.ownerOf.set(child, owner);
    let children = this.byOwner.get(owner);
    if (!children) this.byOwner.set(owner, (children = new Set()));
    children.add(child);
  }

  delete(child: string): void {
    const owner = this.ownerOf.get(child);
    if (owner === undefined) return;
    this.ownerOf.delete(child);
    const children = this.byOwner.get(owner);
    children?.delete(child);
    if (children?.size === 0) this.byOwner.delete(owner);
  }

  children(owner: string): ReadonlySet<string> {
    return this.byOwner.get(owner) ?? new Set();
  }
}
