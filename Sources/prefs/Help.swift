/// The help texts of `prefs` and of each command.
enum Help {
    static let tool = """
        prefs: read, write, check and repair Preferences stores.

        usage: prefs COMMAND STORE [ARGUMENTS] [OPTIONS]

        Commands:
          read STORE [KEY]                   every entry (key, type, value), or one value
          write STORE KEY VALUE [--type T]   write a value; --force to change an entry's type
          delete STORE KEY                   remove an entry
          keys STORE [--namespace NS]        list the stored keys
          export STORE [--format json|plist] print every entry, for 'import' or for UserDefaults
          import STORE FILE                  write every entry of an export or a plist, all or nothing
          verify STORE                       check every checksum and record; exit 1 if damaged
          repair STORE                       keep a copy of damaged files, keep what verifies
          ledger STORE                       the migrations applied
          compact STORE                      fold the log into a new snapshot
          watch STORE [KEY]                  print changes as they are made, until interrupted
          schema STORE [--format json|plist] the keys the app declared: types, defaults, summaries
          log STORE [KEY] [--since DATE]     the changes the store's history keeps, newest first
          restore STORE KEY --to N           write back the value of KEY's Nth change in 'prefs log'
          sync STORE FOLDER                  one round of sync with the devices sharing FOLDER

        STORE is a store's file path, or --standard IDENTIFIER for the standard store of the program
        with that bundle identifier or process name. KEY is namespace:name (app:theme, global:flag,
        com.vendor.sdk:token), or a name in --namespace NS, which is 'app' unless given.

        Options: --json prints JSON on every command; --help describes a command.

        Exit status: 0 done (verify: whole); 1 not found (verify: damaged; read/delete: no such key);
        2 usage error; 3 the store could not be opened, read or written; 4 refused (a write that
        would change an entry's type or break the declared one, without --force).

        prefs never changes a store it cannot read: a damaged store is reported, and only
        'prefs repair' recovers it.
        """

    static let commands: [String: String] = [
        "read": """
        usage: prefs read STORE [KEY] [--json]

        Prints every entry as key, type and value, or the value of KEY alone. Keys the app declared (with
        PreferencesStore.register) that hold no value are shown with their default; those whose default is
        computed, or nil, have none to show and are left out. Exits 1 if KEY has no value and no default.
        """,
        "write": """
        usage: prefs write STORE KEY VALUE [--type bool|int|double|string|date|data|url|array|dictionary|json]
                           [--force] [--json]

        Writes VALUE, in the text 'prefs read' prints, read as --type: the existing entry's type if none is
        given, the declared type for a declared key with no entry, or string for a new entry. date is ISO 8601,
        data base64, array and dictionary JSON (each item read as the entry's items are stored: a date from
        ISO 8601 text, data from base64), json any JSON text (stored as a Codable value). Writing another type
        over an entry, a type the app's declared key does not read, or a value that breaks one of its rules
        (a range, allowed values, a maximum length), is refused (exit 4) unless --force. Rules only the app's
        code can check are not checked here: the app reports and skips a value that breaks one.
        """,
        "schema": """
        usage: prefs schema STORE [--format json|plist]

        Prints the keys the app declared with PreferencesStore.register: as JSON (key, Swift type, the --type
        names it reads, default, summary, rules), or as a property-list skeleton of an Apple managed app configuration,
        each key with a fixed default holding it and its rules in a comment above it, for an administrator to
        fill in. Keys with a computed default
        or none are left out, named in a comment. Every key left in the file is forced: the app cannot change
        it, so delete the keys you do not mean to manage. On Linux, the same dictionary saved as
        $XDG_CONFIG_DIRS/<program>/preferences.plist is read as managed settings. Exits 1 if none was declared.
        """,
        "delete": "usage: prefs delete STORE KEY [--json]\n\nRemoves the entry. Exits 1 if there is none.",
        "keys": "usage: prefs keys STORE [--namespace NS] [--json]\n\nLists the stored keys, or those in NS.",
        "export": """
        usage: prefs export STORE [--format json|plist]

        Prints every entry: as JSON with types, which 'prefs import' reads back exactly, or as a property list
        named as a UserDefaults suite names them (plain names for the global namespace). A property list holds
        dates to the second; where Foundation would write -0.0 as 0.0, a plist export of -0.0 is refused (exit 4).
        """,
        "import": """
        usage: prefs import STORE FILE [--json]

        Writes every entry of FILE, a 'prefs export' or a property list as UserDefaults writes it, in one commit:
        if any entry does not read, none is written.
        """,
        "verify": """
        usage: prefs verify STORE [--json]

        Checks every checksum and record without changing anything. Exits 0 when the store is whole and 1 when
        it is damaged, with a report of what verifies and what does not.
        """,
        "repair": """
        usage: prefs repair STORE [--json]

        Keeps a copy of each damaged file beside it, then writes a store of every record that verifies.
        """,
        "ledger":
            "usage: prefs ledger STORE [--json]\n\nPrints the migrations applied to the store: when, which, and what they did.",
        "compact": "usage: prefs compact STORE [--json]\n\nFolds the log into a new snapshot now.",
        "log": """
        usage: prefs log STORE [KEY] [--since DATE] [--json]
               prefs log STORE --clear

        Prints the changes the store's history keeps, newest first, one a line: when, the key, the value
        before and after, why (write, transaction, migration, import, reset, tool, restore, sync), and the program
        and process that made it. Changes are numbered per key, 1 the newest, for 'prefs restore'. DATE is
        ISO 8601 (2026-11-27, or 2026-11-27T09:30:00Z). The value before the oldest change kept is not known.
        --clear removes the whole history and keeps every value.
        """,
        "restore": """
        usage: prefs restore STORE KEY --to N [--json]

        Writes back the value KEY had after its Nth change as 'prefs log STORE KEY' numbers them (1 the newest),
        as a change of its own, which the history then shows. A change that removed the value removes it.
        """,
        "watch": """
        usage: prefs watch STORE [KEY] [--json]

        Prints each change as it is made, by this or any other process, until interrupted, with where it
        came from: this store, another process, a migration, managed settings, or the device a synced
        change was made on. With --json, one JSON object per line.
        """,
        "sync": """
        usage: prefs sync STORE FOLDER [--json]

        Runs one round of sync through FOLDER, with the keys the app last synced the store with: reads the
        other devices' files, applies the changes that win, and offers the store's own. Prints the keys
        received and sent; files skipped because they do not verify are reported on standard error. Exits
        1 if no app has synced the store.
        """,
    ]
}
