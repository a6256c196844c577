//! The LLM's settings from the environment (`ALAYASIKI_LLM_*`, named in
//! [`crate::config`]): parsed here, where [`LlmConfig`] is defined, so that
//! configuration stays a leaf below the engine.

use crate::config::{
    env, LLM_API_ENV, LLM_API_KEY_ENV, LLM_MODEL_ENV, LLM_TIMEOUT_ENV, LLM_URL_ENV, LLM_USES,
    LLM_USE_ENV,
};
use crate::limits::{DEFAULT_LLM_TIMEOUT_MS, MAX_LLM_TIMEOUT_MS};
use crate::model_endpoint::{check_url, parse_timeout_ms, Api};

use super::LlmConfig;

impl LlmConfig {
    /// The optional LLM, from `ALAYASIKI_LLM_*`; `None` when
    /// `ALAYASIKI_LLM_URL` is unset (the default: nothing is ever sent).
    ///
    /// `ALAYASIKI_LLM_URL` is the server's base URL (`http://127.0.0.1:11434`,
    /// `http://127.0.0.1:8000/v1`) or its full chat endpoint.
    /// `ALAYASIKI_LLM_API` is `openai` (`POST …/v1/chat/completions` with a
    /// `json_schema` response format) or `ollama` (`POST …/api/chat` with the
    /// schema as `format`); by default `ollama` when the URL ends in
    /// `/api/chat`, else `openai`. `ALAYASIKI_LLM_MODEL` is required;
    /// `ALAYASIKI_LLM_USE` lists what the LLM does ([`LLM_USES`]; default all
    /// of them). Errors are for the operator, so they name variables.
    pub fn from_env() -> Result<Option<LlmConfig>, String> {
        LlmConfig::from_vars(env)
    }

    /// [`LlmConfig::from_env`] over any variable source (for tests).
    fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Option<LlmConfig>, String> {
        let var = |k: &str| {
            var(k)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let Some(base) = var(LLM_URL_ENV) else {
            return Ok(None);
        };
        check_url(LLM_URL_ENV, &base)?;
        let base = base.trim_end_matches('/').to_string();
        let api = match var(LLM_API_ENV) {
            Some(name) => Api::parse(LLM_API_ENV, &name)?,
            None if base.ends_with("/api/chat") => Api::Ollama,
            None => Api::OpenAi,
        };
        let url = match api {
            Api::OpenAi if base.ends_with("/chat/completions") => base,
            Api::OpenAi if base.ends_with("/v1") => format!("{base}/chat/completions"),
            Api::OpenAi => format!("{base}/v1/chat/completions"),
            Api::Ollama if base.ends_with("/api/chat") => base,
            Api::Ollama => format!("{base}/api/chat"),
        };
        let model = var(LLM_MODEL_ENV)
            .ok_or_else(|| format!("{LLM_MODEL_ENV} is required with {LLM_URL_ENV}"))?;
        let timeout = match var(LLM_TIMEOUT_ENV) {
            None => std::time::Duration::from_millis(DEFAULT_LLM_TIMEOUT_MS),
            Some(t) => parse_timeout_ms(LLM_TIMEOUT_ENV, &t, MAX_LLM_TIMEOUT_MS)?,
        };
        let (mut extract, mut answer, mut summarize) = (false, false, false);
        let uses = LLM_USES.join(", ");
        for part in var(LLM_USE_ENV)
            .unwrap_or_else(|| LLM_USES.join(","))
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            match part {
                "extract" => extract = true,
                "answer" => answer = true,
                "summarize" => summarize = true,
                other => return Err(format!("{LLM_USE_ENV}: {other:?} is not one of: {uses}")),
            }
        }
        if !(extract || answer || summarize) {
            return Err(format!("{LLM_USE_ENV} must name at least one of: {uses}"));
        }
        Ok(Some(LlmConfig {
            url,
            api,
            model,
            api_key: var(LLM_API_KEY_ENV),
            timeout,
            extract,
            answer,
            summarize,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn llm(vars: &[(&str, &str)]) -> Result<Option<LlmConfig>, String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        LlmConfig::from_vars(|k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
    }

    #[test]
    fn llm_is_off_unless_its_url_is_set() {
        assert!(llm(&[]).unwrap().is_none());
        assert!(llm(&[(LLM_URL_ENV, "  "), (LLM_MODEL_ENV, "m")])
            .unwrap()
            .is_none());
        assert!(llm(&[(LLM_MODEL_ENV, "m")]).unwrap().is_none());
    }

    #[test]
    fn llm_base_urls_become_chat_endpoints() {
        let url = |base: &str, api: Option<&str>| {
            let mut vars = vec![(LLM_URL_ENV, base), (LLM_MODEL_ENV, "m")];
            if let Some(api) = api {
                vars.push((LLM_API_ENV, api));
            }
            let c = llm(&vars).unwrap().unwrap();
            (c.url, c.api)
        };
        assert_eq!(
            url("http://h:8000", None),
            ("http://h:8000/v1/chat/completions".into(), Api::OpenAi)
        );
        assert_eq!(
            url("http://h:8000/v1/", None),
            ("http://h:8000/v1/chat/completions".into(), Api::OpenAi)
        );
        assert_eq!(
            url("http://h/x/chat/completions", None),
            ("http://h/x/chat/completions".into(), Api::OpenAi)
        );
        assert_eq!(
            url("http://h:11434", Some("ollama")),
            ("http://h:11434/api/chat".into(), Api::Ollama)
        );
        assert_eq!(
            url("http://h:11434/api/chat", None),
            ("http://h:11434/api/chat".into(), Api::Ollama)
        );
    }

    #[test]
    fn llm_settings_are_validated() {
        let base = [(LLM_URL_ENV, "http://h"), (LLM_MODEL_ENV, "m")];
        let with = |extra: (&'static str, &'static str)| {
            let mut v = base.to_vec();
            v.push(extra);
            llm(&v)
        };
        assert!(llm(&[(LLM_URL_ENV, "http://h")])
            .unwrap_err()
            .contains(LLM_MODEL_ENV));
        assert!(llm(&[(LLM_URL_ENV, "ftp://h"), (LLM_MODEL_ENV, "m")]).is_err());
        assert!(with((LLM_API_ENV, "gpt")).is_err());
        assert!(with((LLM_TIMEOUT_ENV, "0")).is_err());
        assert!(with((LLM_TIMEOUT_ENV, "soon")).is_err());
        let unknown = with((LLM_USE_ENV, "summarise")).unwrap_err();
        assert!(
            unknown.contains("\"summarise\" is not one of: extract, answer, summarize"),
            "{unknown}"
        );
        assert!(with((LLM_USE_ENV, ","))
            .unwrap_err()
            .contains("extract, answer, summarize"));
        let c = with((LLM_USE_ENV, "answer")).unwrap().unwrap();
        assert!(c.answer && !c.extract && !c.summarize);
        let c = with((LLM_USE_ENV, " summarize ,extract")).unwrap().unwrap();
        assert!(c.summarize && c.extract && !c.answer);
        let c = llm(&base).unwrap().unwrap();
        assert!(c.answer && c.extract && c.summarize, "all by default");
        assert_eq!(
            c.timeout,
            std::time::Duration::from_millis(DEFAULT_LLM_TIMEOUT_MS)
        );
        assert!(c.api_key.is_none());
    }
}
