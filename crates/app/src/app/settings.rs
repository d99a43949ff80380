//! What persists between launches ([`Settings`]: the connection, the query panel, the Load tab,
//! the open [`Tab`], the last folder a dialog chose), saved through eframe's storage (RON).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::connection::ConnectionSettings;
use super::load::LoadSettings;
use super::query::{ModesByTarget, QuerySettings};

/// The views of the central area.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Tab {
    /// Bars per iteration and the summary.
    #[default]
    Iterations,
    /// Runs side by side.
    Compare,
    /// Rows, stats, plan and the error log.
    Details,
    /// The query plan's operators: icicle chart and tree table.
    Plan,
    /// The run history: a query's runs over time.
    History,
    /// A load test: the query under rising load, its latency against the load and the knee.
    Load,
}

impl Tab {
    /// The tab named `name` (`iterations`, `compare`, `plan`, `details`, `history` or `load`,
    /// any case).
    pub fn parse(name: &str) -> Result<Tab, String> {
        match name.to_ascii_lowercase().as_str() {
            "iterations" => Ok(Tab::Iterations),
            "compare" => Ok(Tab::Compare),
            "plan" => Ok(Tab::Plan),
            "details" => Ok(Tab::Details),
            "history" => Ok(Tab::History),
            "load" => Ok(Tab::Load),
            _ => Err(format!(
                "no tab \"{name}\": iterations, compare, plan, details, history or load"
            )),
        }
    }
}

/// What persists between launches.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// The connection panel.
    pub connection: ConnectionSettings,
    /// The query panel, recent queries included.
    pub query: QuerySettings,
    /// The query mode last set on each kind of target, restored on switching back to it.
    pub modes_by_target: ModesByTarget,
    /// The Load tab.
    pub load: LoadSettings,
    /// The open tab.
    pub tab: Tab,
    /// The folder of the last file chosen in a dialog (the next dialog opens there).
    pub last_folder: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::app::TargetKind;
    use crate::app::query::VariantSettings;
    use crate::engine::Priority;

    /// What the version before the variants were stored alike saved (eframe writes RON): the
    /// first variant `wide` apart, the second `narrow` in `variants`, the second being edited.
    const SAVED_BEFORE_VARIANTS_ALIKE: &str = r#"(connection:(kind:Local,local:(seed23_rows:100000,knobs:(max_message_bytes:1048576,fail_every:0,first_byte_delay_ms:0,message_delay_ms:0,bandwidth_bytes_per_s:0,max_concurrent_queries:32,max_unary_result_bytes:10485760,max_value_bytes:10485760,max_sql_bytes:1048576,max_parked_streams:64,park_timeout_ms:60000,max_sessions:10000,session_idle_timeout_ms:3600000,max_name_bytes:256,shape:production)),emulator:(host_port:"127.0.0.1:9010",project:"test-project",instance:"test-instance",database:"test-db",seed_rows:10000),cloud:(project:"",instance:"",database:"",credentials_file:None,endpoint:"https://spanner.googleapis.com")),query:(sql:"SELECT * FROM Seed23 LIMIT 300",params:"n:INT64=3",mode:WithStats,decoder:fast,iterations:7,warmup:1,label:"wide",options:(priority:Some(low),request_tag:"t1",staleness:"",optimizer_version:"",statistics_package:"",replicas:Any,replica_list:"",partitioned:false,data_boost:false,max_partitions:0),variants:[(label:"narrow",sql:"SELECT Id FROM Seed23 LIMIT 300",params:"n:INT64=3",options:(priority:Some(low),request_tag:"t1",staleness:"",optimizer_version:"",statistics_package:"",replicas:Any,replica_list:"",partitioned:false,data_boost:false,max_partitions:0))],editing:1,sweep:"",order:(order:interleaved),recent:["SELECT 1"],client:false,command:""),tab:Compare,last_folder:None)"#;

    /// The same settings as that version wrote them in JSON.
    const SAVED_BEFORE_VARIANTS_ALIKE_JSON: &str = r#"{"connection":{"kind":"Local","local":{"seed23_rows":100000,"knobs":{"max_message_bytes":1048576,"fail_every":0,"first_byte_delay_ms":0,"message_delay_ms":0,"bandwidth_bytes_per_s":0,"max_concurrent_queries":32,"max_unary_result_bytes":10485760,"max_value_bytes":10485760,"max_sql_bytes":1048576,"max_parked_streams":64,"park_timeout_ms":60000,"max_sessions":10000,"session_idle_timeout_ms":3600000,"max_name_bytes":256,"shape":"production"}},"emulator":{"host_port":"127.0.0.1:9010","project":"test-project","instance":"test-instance","database":"test-db","seed_rows":10000},"cloud":{"project":"","instance":"","database":"","credentials_file":null,"endpoint":"https://spanner.googleapis.com"}},"query":{"sql":"SELECT * FROM Seed23 LIMIT 300","params":"n:INT64=3","mode":"WithStats","decoder":"fast","iterations":7,"warmup":1,"label":"wide","options":{"priority":"low","request_tag":"t1","staleness":"","optimizer_version":"","statistics_package":"","replicas":"Any","replica_list":"","partitioned":false,"data_boost":false,"max_partitions":0},"variants":[{"label":"narrow","sql":"SELECT Id FROM Seed23 LIMIT 300","params":"n:INT64=3","options":{"priority":"low","request_tag":"t1","staleness":"","optimizer_version":"","statistics_package":"","replicas":"Any","replica_list":"","partitioned":false,"data_boost":false,"max_partitions":0}}],"editing":1,"sweep":"","order":{"order":"interleaved"},"recent":["SELECT 1"],"client":false,"command":""},"tab":"Compare","last_folder":null}"#;

    /// eframe's storage in memory: the app's settings go through `eframe::get_value`, as at start.
    struct Memory(HashMap<String, String>);

    impl eframe::Storage for Memory {
        fn get_string(&self, key: &str) -> Option<String> {
            self.0.get(key).cloned()
        }
        fn set_string(&mut self, key: &str, value: String) {
            self.0.insert(key.to_owned(), value);
        }
        fn remove_string(&mut self, key: &str) {
            self.0.remove(key);
        }
        fn flush(&mut self) {}
    }

    fn stored(text: &str) -> Memory {
        Memory(HashMap::from([(
            eframe::APP_KEY.to_owned(),
            text.to_owned(),
        )]))
    }

    /// Both variants of the fixtures, as they read back.
    fn wide_and_narrow(settings: &Settings) {
        let q = &settings.query;
        let labels: Vec<&str> = q.variants.iter().map(|v| v.label.as_str()).collect();
        assert_eq!(labels, ["wide", "narrow"]);
        let wide = &q.variants[0];
        assert_eq!(wide.sql, "SELECT * FROM Seed23 LIMIT 300");
        assert_eq!(wide.params, "n:INT64=3");
        assert_eq!(wide.options.request_tag, "t1");
        assert_eq!(wide.options.priority, Some(Priority::Low));
        assert_eq!(q.variants[1].sql, "SELECT Id FROM Seed23 LIMIT 300");
        assert_eq!(q.editing, 1, "the variant that was being edited");
        assert_eq!(q.iterations, 7);
        assert_eq!(q.recent, ["SELECT 1"]);
        assert_eq!(settings.tab, Tab::Compare);
    }

    #[test]
    fn settings_saved_before_the_variants_were_stored_alike_load_with_every_variant() {
        let ron: Settings =
            eframe::get_value(&stored(SAVED_BEFORE_VARIANTS_ALIKE), eframe::APP_KEY)
                .expect("the old RON reads back");
        wide_and_narrow(&ron);
        let json: Settings = serde_json::from_str(SAVED_BEFORE_VARIANTS_ALIKE_JSON)
            .expect("the old JSON reads back");
        assert_eq!(json, ron);
        // Saved again, they are in today's layout and read back the same.
        let mut memory = stored("");
        eframe::set_value(&mut memory, eframe::APP_KEY, &ron);
        let again: Option<Settings> = eframe::get_value(&memory, eframe::APP_KEY);
        assert_eq!(again.as_ref(), Some(&ron));
        assert!(!memory.0[eframe::APP_KEY].contains("query:(sql:"));
    }

    #[test]
    fn settings_round_trip_and_missing_fields_take_defaults() -> Result<(), serde_json::Error> {
        let mut settings = Settings::default();
        settings.query.remember("SELECT 1");
        settings.query.add_variant();
        settings.connection.kind = TargetKind::Emulator;
        settings.tab = Tab::Compare;
        let text = serde_json::to_string(&settings)?;
        assert_eq!(serde_json::from_str::<Settings>(&text)?, settings);
        let old: Settings = serde_json::from_str(r#"{"query": {"sql": "SELECT 2"}}"#)?;
        assert_eq!(old.query.first_sql(), "SELECT 2");
        assert_eq!(old.query.iterations, QuerySettings::default().iterations);
        assert_eq!(old.connection, ConnectionSettings::default());
        let new: Settings =
            serde_json::from_str(r#"{"query": {"variants": [{"sql": "SELECT 3"}]}}"#)?;
        assert_eq!(
            new.query.variants,
            [VariantSettings {
                sql: "SELECT 3".into(),
                ..VariantSettings::default()
            }]
        );
        Ok(())
    }
}
