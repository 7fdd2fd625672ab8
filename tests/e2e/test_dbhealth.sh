#!/bin/bash
# The database's health (issue 11, docs/state.md "Opening"):
#   * read-only commands (status, list, show, log) open the database
#     read-only and work with the state dir on a read-only file system
#     (a read-only bind mount in a private mount namespace: `unshare -m`;
#     root ignores permission bits, a read-only mount it cannot);
#   * a database with a damaged b-tree page is refused by every command,
#     with a message naming the file and saying what to do, and the file
#     is left byte-for-byte as it was.
. "$(dirname "$0")/lib.sh"
cd "$T_TMP" || exit 1

new_project
new_story "$P" s1 2 '<!-- sim a1: check 1; exit 1 -->' '<!-- sim *: checkall -->'
new_story "$P" s2 3 '<!-- sim *: checkall -->'
commit_all
run_sc -C "$P" run
expect_rc "a small batch runs" 0
S="$P/.storyctl"

# ---- read-only ----
snap() { # the read commands' output, one after the other
	"$STORYCTL" -C "$P" status --json | jq -S 'del(.now, .updated_at)'
	"$STORYCTL" -C "$P" list --json
	"$STORYCTL" -C "$P" list
	"$STORYCTL" -C "$P" show s1 --json
	"$STORYCTL" -C "$P" show s1
	"$STORYCTL" -C "$P" log --json
	"$STORYCTL" -C "$P" log
}
want=$(snap 2>&1)
if unshare -m true 2>/dev/null; then
	export -f snap
	export P STORYCTL
	got=$(unshare -m bash -c '
		mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" || exit 99
		if touch "$1/probe" 2>/dev/null; then exit 98; fi
		snap 2>&1' _ "$S")
	rc=$?
	check "read-only: the state dir was mounted read-only (rc $rc)" \
		bash -c '[ "$1" -ne 99 ] && [ "$1" -ne 98 ]' _ "$rc"
	if [ "$got" = "$want" ]; then
		ok "read-only: status, list, show and log print what they print on a writable dir"
	else
		not_ok "read-only: status, list, show and log print what they print on a writable dir"
		diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | head -10 | sed 's/^/# /'
	fi
	got=$(unshare -m bash -c '
		mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" || exit 99
		"$STORYCTL" -C "$P" resume' _ "$S" 2>&1)
	rc=$?
	check "read-only: resume (a writer) fails with 74 (got $rc)" [ "$rc" = 74 ]
else
	echo "# unshare -m is not available: read-only case skipped"
fi

# ---- a damaged database ----
sqlite3 "$S/state.db" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
pgsz=$(sqlite3 "$S/state.db" 'PRAGMA page_size')
npages=$(sqlite3 "$S/state.db" 'PRAGMA page_count')
check "the database has pages to damage ($npages)" [ "$npages" -ge 4 ]
# a copy of the project as it was, for the readers' output
cp -a "$P" "$T_TMP/undamaged"
sed -i "s|$P|$T_TMP/undamaged|g" "$T_TMP/undamaged/storyctl.json" 2>/dev/null
# garbage over page 3 (a b-tree page; page 1 holds the header)
head -c "$pgsz" /dev/urandom | tr '\0' '\1' >"$T_TMP/garbage"
dd if="$T_TMP/garbage" of="$S/state.db" bs="$pgsz" seek=2 count=1 conv=notrunc 2>/dev/null
cp "$S/state.db" "$T_TMP/damaged.db"
check "sqlite3 itself sees the damage" \
	bash -c '[ "$(sqlite3 "$1" "PRAGMA quick_check" 2>&1)" != ok ]' _ "$S/state.db"
for cmd in run resume "requeue s1"; do
	# shellcheck disable=SC2086
	run_sc -C "$P" $cmd
	check "damaged: '$cmd' (a writer) is refused with 74 (exit $T_RC)" [ "$T_RC" = 74 ]
	expect_match "damaged: '$cmd' names the file and what to do" "$T_ERR" \
		"state\.db: the database is damaged.*move it aside"
done
# readers do not pay for a full check (docs/state.md#opening): they show
# what they can read, and refuse with the same message the moment they
# read a damaged page
for cmd in status list "show s1" "show s2 --json" log; do
	# shellcheck disable=SC2086
	run_sc -C "$P" $cmd
	# shellcheck disable=SC2086
	before=$(cd "$T_TMP" && "$STORYCTL" -C "$T_TMP/undamaged" $cmd 2>&1)
	if [ "$T_RC" = 0 ]; then
		check "damaged: reader '$cmd' printed the undamaged record" \
			[ "$T_OUT" = "$before" ]
	else
		check "damaged: reader '$cmd' refused with 74 (exit $T_RC)" [ "$T_RC" = 74 ]
		expect_match "damaged: reader '$cmd' names the file and what to do" "$T_ERR" \
			"state\.db: the database is damaged.*move it aside"
	fi
done
check "damaged: the file is byte-for-byte unchanged" cmp -s "$S/state.db" "$T_TMP/damaged.db"

finish
