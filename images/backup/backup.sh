#!/usr/bin/env bash
# Entry point of the reference backup image. It honours the backup image contract
# (docs/backup-image.md): configuration from BACKUP_* variables and a mounted credentials Secret,
# one gzip-compressed SQL dump per run in BACKUP_DESTINATION, retention by the timestamp in the
# file name, and a `cleanup` mode for the operator's finalizer.
set -euo pipefail
# Dumps hold the database's data: only the backup user may read what this script creates.
umask 077

readonly ENGINES='mysql|mariadb|postgres'
readonly STAMP_REGEX='[0-9]{8}T[0-9]{6}Z'
# The only names this script ever deletes: finished backups and its own leftover partial files.
readonly BACKUP_NAME_REGEX="^($ENGINES)-($STAMP_REGEX)\\.sql\\.gz\$"
readonly PARTIAL_NAME_REGEX="^\\.($ENGINES)-($STAMP_REGEX)\\.sql\\.gz\\.partial\\.[A-Za-z0-9]+\$"
readonly CONNECT_TIMEOUT_SECONDS=10
readonly DEFAULT_RETENTION_DAYS=7

partial_file=''

log() { printf 'backup: %s\n' "$*"; }

# Exit 2 for configuration the user must fix, 1 for everything that went wrong at run time.
config_error() {
  printf 'backup failed: %s\n' "$*" >&2
  exit 2
}

fail() {
  printf 'backup failed: %s\n' "$*" >&2
  exit 1
}

remove_partial_file() {
  if [[ -n $partial_file ]]; then rm -f -- "$partial_file"; fi
}

# Several lines of a client's stderr become one, so the failure stays a single readable line.
# (A pipe, not a here-string: older shells back those with a file in /tmp, which may be read-only.)
one_line() {
  printf '%s' "$1" | tr '\n\t' '  ' | tr -s ' ' | sed -e 's/^ //' -e 's/ $//'
}

# Sets REPLY to one optional key of the mounted Secret (empty when absent). Secrets made with
# `echo` end in a newline, which is never part of the value.
credential() {
  local file="$credentials_dir/$1"
  REPLY=''
  [[ -e $file ]] || return 0
  [[ -r $file ]] || fail "cannot read key '$1' in credentials dir $credentials_dir (uid $(id -u))"
  REPLY=$(<"$file")
}

parse_target() {
  local target=$1 authority='' rest
  if [[ $target == *://* ]]; then
    engine=${target%%://*}
    rest=${target#*://}
    authority=${rest%%/*}
    if [[ $rest == */* ]]; then target_database=${rest#*/}; fi
  else
    engine=$target
  fi
  # A URL with user:password@ would print the password in every message that names the target,
  # so it is refused before any message does.
  if [[ $target == *@* || $target_database == *[?#]* ]]; then
    config_error "BACKUP_TARGET must have the form <engine>://host[:port]/database; put the" \
      "username and password in the credentials Secret, not in the URL"
  fi
  engine=${engine,,}
  case $engine in
    mysql | mariadb) default_port=3306 ;;
    postgres | postgresql) engine=postgres default_port=5432 ;;
    *)
      config_error "BACKUP_TARGET '$target' names unknown engine '$engine'" \
        "(expected mysql, mariadb, postgres or postgresql, optionally as <engine>://host[:port]/database)"
      ;;
  esac
  parse_authority "$authority"
}

parse_authority() {
  local authority=$1
  if [[ $authority == \[* ]]; then
    target_host=${authority%%]*}
    target_host=${target_host#[}
    authority=${authority#*]}
    target_port=${authority#:}
  elif [[ $authority == *:*:* ]]; then
    config_error "BACKUP_TARGET host '$authority': write IPv6 addresses in brackets, e.g. [::1]:5432"
  elif [[ $authority == *:* ]]; then
    target_host=${authority%%:*}
    target_port=${authority#*:}
  else
    target_host=$authority
  fi
}

# Credentials keys win over the URL, the URL over the engine's defaults.
resolve_connection() {
  credential host
  host=${REPLY:-$target_host}
  credential port
  port=${REPLY:-${target_port:-$default_port}}
  credential database
  database=${REPLY:-$target_database}
  credential username
  username=$REPLY
  credential password
  password=$REPLY
  [[ -n $host ]] || config_error "no database host: BACKUP_TARGET '$BACKUP_TARGET' names none and" \
    "the credentials dir $credentials_dir has no 'host' key"
  if ! [[ $port =~ ^[0-9]{1,5}$ ]] || ((10#$port < 1 || 10#$port > 65535)); then
    config_error "database port '$port' is not a number between 1 and 65535"
  fi
  port=$((10#$port))
  [[ -n $database ]] || config_error "no database name: BACKUP_TARGET '$BACKUP_TARGET' names none" \
    "and the credentials dir $credentials_dir has no 'database' key"
  [[ -n $username ]] || config_error "no database user: the credentials dir $credentials_dir has" \
    "no 'username' key"
}

parse_retention_days() {
  retention_days=${BACKUP_RETENTION_DAYS:-$DEFAULT_RETENTION_DAYS}
  [[ $retention_days =~ ^[1-9][0-9]{0,4}$ ]] ||
    config_error "BACKUP_RETENTION_DAYS '$retention_days' is not a whole number of days from 1 to 99999"
}

require_destination_setting() {
  destination=${BACKUP_DESTINATION:-}
  [[ -n $destination ]] || config_error "BACKUP_DESTINATION is not set: it must name the directory" \
    "on the storage volume where this BackupJob's dumps are kept"
  destination=${destination%/}
  destination=${destination:-/}
}

prepare_destination() {
  mkdir -p -- "$destination" 2>/dev/null ||
    fail "destination $destination does not exist and cannot be created (uid $(id -u))"
  [[ -d $destination ]] || fail "destination $destination is not a directory"
  [[ -w $destination && -x $destination ]] ||
    fail "destination $destination is not writable by uid $(id -u)"
}

# Debian and MariaDB images ship mariadb-dump; MySQL images ship mysqldump. Both speak to either server.
dump_tool() {
  local candidates=(pg_dump) tool
  if [[ $engine != postgres ]]; then candidates=(mariadb-dump mysqldump); fi
  for tool in "${candidates[@]}"; do
    if command -v "$tool" >/dev/null; then
      printf '%s' "$tool"
      return 0
    fi
  done
  fail "no dump client for $engine in this image: install ${candidates[*]}"
}

# A TCP probe first turns "the server is not there" into its own message, apart from dump errors.
check_reachable() {
  local output reason
  [[ $host == /* ]] && return 0
  # shellcheck disable=SC2016 # $1 and $2 expand in the child shell, which gets host and port as arguments
  if output=$(timeout "$CONNECT_TIMEOUT_SECONDS" bash -c ': >"/dev/tcp/$1/$2"' _ "$host" "$port" 2>&1); then
    return 0
  elif [[ $? -eq 124 ]]; then
    reason="no answer within ${CONNECT_TIMEOUT_SECONDS}s"
  else
    reason=${output%%$'\n'*}
    reason=${reason#_: }
    reason=${reason#line 1: }
    reason=${reason#connect: }
  fi
  fail "cannot connect to $engine server at $host:$port: $reason"
}

dump_command() {
  local tool=$1
  if [[ $engine == postgres ]]; then
    dump=("$tool" --host="$host" --port="$port" --username="$username" --dbname="$database"
      --no-password --format=plain)
  else
    # --single-transaction gives a consistent InnoDB snapshot without locking writers;
    # --no-tablespaces avoids needing the PROCESS privilege on MySQL 8.
    dump=("$tool" --protocol=TCP --host="$host" --port="$port" --user="$username"
      --single-transaction --quick --routines --triggers --hex-blob --no-tablespaces
      --default-character-set=utf8mb4 -- "$database")
  fi
}

# The password travels in the client's environment, never on a command line that `ps` shows.
run_dump() {
  local into=$1
  (
    if [[ -n $password ]]; then
      if [[ $engine == postgres ]]; then export PGPASSWORD=$password; else export MYSQL_PWD=$password; fi
    fi
    export PGCONNECT_TIMEOUT=$CONNECT_TIMEOUT_SECONDS PGAPPNAME=backupjob-backup
    { "${dump[@]}" | gzip -c >"$into"; } 2>&1
  )
}

utc_stamp() { date -u -d "@$1" +%Y%m%dT%H%M%SZ; }

backup() {
  local now stamp final errors bytes tool
  [[ -n ${BACKUP_TARGET:-} ]] || config_error "BACKUP_TARGET is not set: it must name the engine," \
    "e.g. mysql, or a URL such as postgres://db.example.svc:5432/app"
  target_host='' target_port='' target_database=''
  parse_target "$BACKUP_TARGET"
  parse_retention_days
  require_destination_setting
  resolve_connection
  tool=$(dump_tool)
  prepare_destination
  check_reachable

  now=$(date -u +%s)
  stamp=$(utc_stamp "$now")
  final="$destination/$engine-$stamp.sql.gz"
  partial_file=$(mktemp -p "$destination" ".$engine-$stamp.sql.gz.partial.XXXXXX" 2>/dev/null) ||
    fail "destination $destination is not writable by uid $(id -u)"
  log "BackupJob $job: dumping $engine database '$database' at $host:$port as '$username' with $tool"
  dump_command "$tool"
  if ! errors=$(run_dump "$partial_file"); then
    fail "dump of $engine database '$database' at $host:$port failed: $(one_line "$errors")"
  fi
  if [[ -n $errors ]]; then printf 'backup: warning: %s\n' "$(one_line "$errors")" >&2; fi
  sync -- "$partial_file" 2>/dev/null || true
  mv -f -- "$partial_file" "$final" || fail "cannot rename the finished dump to $final"
  partial_file=''
  bytes=$(wc -c <"$final")
  prune_older_than "$(utc_stamp $((now - retention_days * 86400)))" "${final##*/}"
  printf 'backup ok: file=%s bytes=%s pruned=%s\n' "$final" "$((bytes))" "$pruned"
}

# Counts in `pruned` the finished backups it removed. Age comes from the timestamp in the name,
# which survives copies and restores of the volume that reset modification times.
prune_older_than() {
  local cutoff=$1 keep=$2 path name
  pruned=0
  for path in "$destination"/* "$destination"/.*; do
    name=${path##*/}
    [[ -f $path && ! -L $path && $name != "$keep" ]] || continue
    if [[ $name =~ $BACKUP_NAME_REGEX ]] && is_before "${BASH_REMATCH[2]}" "$cutoff"; then
      rm -f -- "$path" || fail "cannot remove expired backup $path"
      log "pruned $name (older than $retention_days days)"
      pruned=$((pruned + 1))
    elif [[ $name =~ $PARTIAL_NAME_REGEX ]] && is_before "${BASH_REMATCH[2]}" "$cutoff"; then
      rm -f -- "$path" || fail "cannot remove leftover partial dump $path"
      log "removed leftover partial dump $name"
    fi
  done
}

# Compares two YYYYMMDDTHHMMSSZ stamps as numbers, free of the locale's collation order.
is_before() {
  local a=${1//[TZ]/} b=${2//[TZ]/}
  ((10#$a < 10#$b))
}

# The destination belongs to this one BackupJob, so every backup in it is removed, whatever engine
# wrote it; files of any other name stay.
cleanup() {
  local path name count=0
  require_destination_setting
  if [[ ! -e $destination ]]; then
    printf 'cleanup ok: dir=%s removed=0 (nothing stored)\n' "$destination"
    return 0
  fi
  [[ -d $destination ]] || fail "destination $destination is not a directory"
  log "BackupJob $job: removing all backups in $destination"
  for path in "$destination"/* "$destination"/.*; do
    name=${path##*/}
    [[ -f $path && ! -L $path ]] || continue
    if [[ $name =~ $BACKUP_NAME_REGEX || $name =~ $PARTIAL_NAME_REGEX ]]; then
      rm -f -- "$path" || fail "cannot remove backup $path"
      if [[ $name =~ $BACKUP_NAME_REGEX ]]; then count=$((count + 1)); fi
    fi
  done
  printf 'cleanup ok: dir=%s removed=%s\n' "$destination" "$count"
}

main() {
  shopt -s nullglob
  trap remove_partial_file EXIT
  trap 'exit 143' TERM
  trap 'exit 130' INT
  credentials_dir=${BACKUP_CREDENTIALS_DIR:-/var/run/secrets/backup}
  job="${BACKUP_NAMESPACE:-?}/${BACKUP_NAME:-?}"
  case ${BACKUP_MODE:-backup} in
    backup) backup ;;
    cleanup) cleanup ;;
    *) config_error "BACKUP_MODE '${BACKUP_MODE}' is not one of: backup, cleanup" ;;
  esac
}

main "$@"
