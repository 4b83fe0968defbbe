package models

import "time"

// Job kinds (docs/jobs.md).
const (
	JobGenerate = "generate" // bulk bearer codes, optionally from a pattern
	JobImport   = "import"   // codes from a CSV file
	JobIssue    = "issue"    // a coupon to each user of a list
)

// Job states: queued until an instance takes it, running while one holds its
// lease, then done or failed.
const (
	JobQueued  = "queued"
	JobRunning = "running"
	JobDone    = "done"
	JobFailed  = "failed"
)

// Job is one background job (table jobs). Done counts the input rows
// processed, Errors those refused (their reasons are in the result CSV).
// Owner and LeaseUntil say which instance runs it until when.
type Job struct {
	ID          int64      `gorm:"primaryKey" json:"id"`
	Kind        string     `json:"kind"`
	TemplateID  int64      `json:"template_id"`
	State       string     `json:"state"`
	Params      string     `json:"params,omitempty" doc:"the job's parameters as given (for generate: the pattern)"`
	Done        int64      `json:"done"`
	Total       int64      `json:"total"`
	Errors      int64      `json:"errors"`
	Message     string     `json:"message,omitempty" doc:"why a job failed"`
	Actor       string     `json:"actor"`
	Owner       *string    `json:"-"`
	LeaseUntil  *time.Time `json:"-"`
	ResultParts int64      `json:"-"`
	CreatedAt   time.Time  `json:"created_at"`
	StartedAt   *time.Time `json:"started_at,omitempty"`
	FinishedAt  *time.Time `json:"finished_at,omitempty"`
}

// TableName names the jobs table.
func (Job) TableName() string { return "jobs" }

// Finished reports whether the job will not run again.
func (j *Job) Finished() bool { return j.State == JobDone || j.State == JobFailed }

// JobChunk is one piece (at most 1 MiB) of a job's input or result CSV.
type JobChunk struct {
	JobID int64  `gorm:"primaryKey"`
	Part  string `gorm:"primaryKey"`
	Seq   int64  `gorm:"primaryKey"`
	Data  []byte
}

// TableName names the job chunks table.
func (JobChunk) TableName() string { return "job_chunks" }
